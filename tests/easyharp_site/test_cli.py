"""The `easyharp` command's settings file and its refusals (tests/deploy/test_artifact.py
runs the command itself from the installed wheel)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from easyharp_site.cli import load_env_file, read_env_file
from tests.paths import ROOT


def test_it_reads_names_and_values_skipping_comments_and_quotes(tmp_path: Path) -> None:
    path = tmp_path / "easyharp.env"
    path.write_text(
        "# the host's settings\n\nDEBUG=false\nexport SITE_URL = https://example.org\n"
        "SECRET_KEY=\"a # b\"\nEMPTY=\nALLOWED_HOSTS='example.org'\n"
    )

    assert read_env_file(path) == {
        "DEBUG": "false",
        "SITE_URL": "https://example.org",
        "SECRET_KEY": "a # b",
        "EMPTY": "",
        "ALLOWED_HOSTS": "example.org",
    }


def test_it_refuses_a_line_that_is_not_a_setting_naming_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "easyharp.env"
    path.write_text("DEBUG=false\nSECRET KEY=x\n")

    with pytest.raises(SystemExit, match=r"easyharp.env, line 2: not NAME=value: SECRET KEY=x"):
        read_env_file(path)


def test_the_environment_wins_over_the_file_it_names(tmp_path: Path) -> None:
    path = tmp_path / "easyharp.env"
    path.write_text("DEBUG=false\nWEB_PORT=9000\n")
    environ = {"EASYHARP_ENV_FILE": str(path), "WEB_PORT": "8001"}

    assert load_env_file(environ) == path
    assert environ == {"EASYHARP_ENV_FILE": str(path), "WEB_PORT": "8001", "DEBUG": "false"}


def test_without_a_named_file_it_reads_dot_env_in_the_working_folder_if_any(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    environ: dict[str, str] = {}
    assert load_env_file(environ) is None and environ == {}

    (tmp_path / ".env").write_text("DEBUG=false\n")
    assert load_env_file(environ) == Path(".env") and environ == {"DEBUG": "false"}


def test_a_named_file_that_is_missing_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.env"

    with pytest.raises(SystemExit, match=f"EASYHARP_ENV_FILE={missing}: no such file"):
        load_env_file({"EASYHARP_ENV_FILE": str(missing)})


def test_without_a_command_it_prints_its_usage_and_fails(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", "from easyharp_site.cli import main; main()"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 2
    assert "easyharp web" in result.stderr and "easyharp worker" in result.stderr
