"""`pytest --clock=2026-12-31T23:59:30Z`: the session with the wall clock moved.

The clock of this process is moved to the moment and ticks on from there
(time-machine), and each test starts at the moment again, so the tests marked
`clock` (those whose days and hours matter) can be run where days turn:
`.ci/run` runs them at half past midnight, at 23:59:30, and at 23:59:30 of a
month's last day. Servers that tests start in processes of their own keep the
real clock, and so does the database's own.
"""

from __future__ import annotations

import argparse
import datetime
from collections.abc import Iterator

import pytest
import time_machine


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--clock",
        metavar="MOMENT",
        type=_moment,
        help="run with the wall clock starting at MOMENT (ISO 8601 with its zone, as "
        "2026-12-31T23:59:30Z) and ticking from there; see the `clock` marker",
    )


def _moment(text: str) -> datetime.datetime:
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--clock takes a moment written 2026-12-31T23:59:30Z, not {text!r}"
        ) from None
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"--clock needs a time zone (Z for UTC): {text!r}")
    return moment


def pytest_configure(config: pytest.Config) -> None:
    """Move the clock for the whole session: the fixtures shared by a module or
    the session see the moment too."""
    moment = config.getoption("clock")
    if moment is None:
        return
    traveller = time_machine.travel(moment, tick=True)
    traveller.start()
    config.add_cleanup(traveller.stop)


@pytest.fixture(autouse=True)
def _clock_of_each_test(request: pytest.FixtureRequest) -> Iterator[None]:
    """Under `--clock`, each test starts at the moment again: at 23:59:30, a test
    has its 30 s before midnight whatever ran before it."""
    moment = request.config.getoption("clock")
    if moment is None:
        yield
        return
    with time_machine.travel(moment, tick=True):
        yield
