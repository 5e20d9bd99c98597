"""The suite fails when fewer tests ran than were collected (tests/counting.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.paths import ROOT

TESTS = "def test_one():\n    pass\n\n\ndef test_two():\n    pass\n"
# A plugin that lets one collected test go by without running it.
DROPS_ONE = """
def pytest_runtest_protocol(item, nextitem):
    return True if item.name == "test_two" else None
"""


def run_pytest(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.counting", "-p", "no:cacheprovider",
         "-p", "no:django", "-q", "--rootdir", str(folder), str(folder)],
        cwd=folder, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_a_session_where_every_collected_test_ran_passes(tmp_path: Path) -> None:
    (tmp_path / "test_pair.py").write_text(TESTS)
    result = run_pytest(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_session_where_a_collected_test_never_ran_fails(tmp_path: Path) -> None:
    (tmp_path / "test_pair.py").write_text(TESTS)
    (tmp_path / "conftest.py").write_text(DROPS_ONE)
    result = run_pytest(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "only 1 of 2 collected tests ran" in result.stdout
