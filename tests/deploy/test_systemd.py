"""deploy/systemd: the units pass systemd's own check, read only settings that
.env.example lists, and give the worker's stop the same grace as compose."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from django.conf import settings
from django_q.models import Schedule

from tests.deploy.compose import services
from tests.paths import ROOT

UNITS = ROOT / "deploy" / "systemd"


def virtualenv_bin(folder: Path) -> Path:
    """A virtualenv's commands as the wheel installs them: this suite's Python, and
    each script pyproject.toml names, run by it from this checkout."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    bin_folder = folder / "bin"
    bin_folder.mkdir(parents=True)
    (bin_folder / "python").symlink_to(sys.executable)
    for name, target in scripts.items():
        module, _, function = target.partition(":")
        script = bin_folder / name
        script.write_text(
            f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT)!r})\n"
            f"from {module} import {function}\n{function}()\n"
        )
        script.chmod(0o755)
    return bin_folder


def installed_here(unit: Path, folder: Path, bin_folder: Path) -> Path:
    """The unit with the project's paths pointed at this checkout and a virtualenv's commands."""
    text = unit.read_text()
    text = text.replace("/opt/easyharp/.venv/bin", str(bin_folder))
    text = text.replace("/etc/easyharp/easyharp.env", str(ROOT / ".env.example"))
    text = text.replace("/opt/easyharp", str(ROOT))
    (folder / unit.name).write_text(text)
    return folder / unit.name


def seconds(text: str) -> int:
    number, unit = re.fullmatch(r"(\d+)(s|min)?", text).groups()  # type: ignore[union-attr]
    return int(number) * (60 if unit == "min" else 1)


def test_the_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze is not installed (apt-get install systemd)"
    bin_folder = virtualenv_bin(tmp_path / "venv")
    units = [installed_here(unit, tmp_path, bin_folder) for unit in sorted(UNITS.iterdir())]
    assert {unit.suffix for unit in units} == {".service", ".timer"}

    result = subprocess.run(
        [analyze, "verify", "--man=no", *map(str, units)],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 0 and result.stderr == "", result.stderr


def test_the_units_read_only_settings_that_env_example_lists() -> None:
    example = (ROOT / ".env.example").read_text()
    for unit in UNITS.glob("*.service"):
        for name in re.findall(r"\$\{(\w+)\}", unit.read_text()):
            assert re.search(rf"^{name}=", example, re.MULTILINE), (unit.name, name)


@pytest.mark.django_db
def test_a_stop_of_the_worker_waits_out_its_longest_job_in_compose_and_in_systemd() -> None:
    unit = (UNITS / "easyharp-worker.service").read_text()
    (systemd_grace,) = re.findall(r"^TimeoutStopSec=(\S+)$", unit, re.MULTILINE)
    compose_grace = str(services()["worker"]["stop_grace_period"])
    # Each job's timeout: the default, a mail's (its claim), each schedule's own.
    timeouts = [settings.TASK_TIMEOUT_SECONDS, 4 * settings.EMAIL_TIMEOUT]
    for schedule in Schedule.objects.exclude(kwargs__in=["", None]):
        timeouts += map(int, re.findall(r"'timeout': (\d+)", schedule.kwargs))

    assert len(timeouts) > 2
    assert seconds(systemd_grace) == seconds(compose_grace)
    assert seconds(compose_grace) > max(timeouts)
