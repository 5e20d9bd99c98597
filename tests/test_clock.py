"""`pytest --clock=MOMENT` moves the wall clock; each test starts at the moment (tests/clock.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.paths import ROOT

# Each test sleeps past the minute's turn from the moment, then says what it saw.
TESTS = """
import datetime, time

def check(name):
    started = datetime.datetime.now(datetime.UTC)
    time.sleep(0.2)
    print(name, started.isoformat(), time.time() > started.timestamp())

def test_first():
    check("first")

def test_second():
    check("second")
"""


def run_pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.clock", "-p", "no:cacheprovider",
         "-p", "no:django", "-q", "-s", "--rootdir", str(folder), str(folder), *args],
        cwd=folder, env={"PYTHONPATH": f"{ROOT}:{os.environ.get('PYTHONPATH', '')}",
                         "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_each_test_starts_at_the_moment_and_the_clock_ticks_on(tmp_path: Path) -> None:
    (tmp_path / "test_seen.py").write_text(TESTS)

    result = run_pytest(tmp_path, "--clock=2026-12-31T23:59:59.9Z")

    assert result.returncode == 0, result.stdout + result.stderr
    seen = re.findall(r"(first|second) (\S+) (True|False)", result.stdout)
    assert [(name, moment[:21]) for name, moment, _ in seen] == [
        ("first", "2026-12-31T23:59:59.9"),
        ("second", "2026-12-31T23:59:59.9"),
    ]
    assert all(ticked == "True" for *_, ticked in seen)


def test_a_moment_without_its_zone_is_refused_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "test_seen.py").write_text(TESTS)

    result = run_pytest(tmp_path, "--clock=2026-12-31T23:59:30")

    assert result.returncode == 4  # pytest's usage error
    assert "--clock needs a time zone (Z for UTC)" in result.stderr
