"""The solver's work is counted, not timed: the same deal gets the same par anywhere.

A slow machine is simulated with a clock that jumps ahead on every read: the
solver sees hours pass, but as long as its time cap is not reached it must
answer exactly as it does on a fast one. A cap that is reached is reported.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

import games.solver
from games.rules import Deal, replay
from games.solver import FIRST_WIN, HINT, PAR, Solution, Work, hint, solve
from games.solver.work import Cap
from tests.paths import ROOT

SOLVER = Path(games.solver.__file__).resolve().parent
DEAL = 2
HINTED = "S W9 S"  # a position of deal 1 to hint from
NEVER = 1e9  # a cap no solve reaches, even on the slowed clock


def slow_clock(monkeypatch: pytest.MonkeyPatch, step: float) -> None:
    """Every read of the clock returns ``step`` seconds more than the last one."""
    now = [time.monotonic()]

    def tick() -> float:
        now[0] += step
        return now[0]

    monkeypatch.setattr(time, "monotonic", tick)
    monkeypatch.setattr(time, "perf_counter", tick)


@pytest.fixture(scope="module")
def par() -> Solution:
    """Deal ``DEAL`` solved as a deal of the day is, on this machine as it is."""
    answer = solve(DEAL, seconds=NEVER)
    assert answer.result == "won" and not answer.cut_short
    assert replay(Deal(DEAL), answer.log).moves == answer.moves
    return answer


@pytest.mark.slow
def test_the_same_deal_gets_the_same_par_when_solved_again(par: Solution) -> None:
    again = solve(DEAL, seconds=NEVER)

    assert (again.log, again.nodes, again.cut_short) == (par.log, par.nodes, False)


@pytest.mark.slow
def test_a_slow_machine_gets_the_same_par(par: Solution, monkeypatch: pytest.MonkeyPatch) -> None:
    slow_clock(monkeypatch, step=1.0)

    slowed = solve(DEAL, seconds=NEVER)

    # The solver read the slowed clock (days went by) and still did the same work.
    assert slowed.seconds > 1_000
    assert (slowed.log, slowed.nodes, slowed.cut_short) == (par.log, par.nodes, False)


@pytest.mark.slow
def test_another_process_gets_the_same_par(par: Solution) -> None:
    # Another process, with other string hashes (set and dict orders), through the
    # command line the operators use.
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "games.solver", "solve", Deal(DEAL).code, "--json"]
    result = subprocess.run(
        [*command, "--seconds", "3600"], cwd=ROOT, env=env, capture_output=True, text=True
    )

    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert (answer["log"], answer["moves"], answer["nodes"]) == (
        " ".join(par.log),
        par.moves,
        par.nodes,
    )
    assert answer["cut_short"] is False


def test_a_cap_reached_while_deciding_is_reported_as_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slow_clock(monkeypatch, step=10.0)

    answer = solve(DEAL, seconds=5)

    assert (answer.result, answer.log, answer.cut_short) == ("unknown", (), True)


def test_a_cap_reached_while_shortening_is_reported_with_the_win_so_far(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    work = replace(FIRST_WIN, quick_tries=1_500, thorough_tries=1_500)
    full = solve(DEAL, work=work, seconds=NEVER)
    slow_clock(monkeypatch, step=1.0)

    # Deciding deal 2 reads the clock a handful of times; reordering, many.
    cut = solve(DEAL, work=work, seconds=50)

    assert (cut.result, cut.cut_short) == ("won", True)
    assert replay(Deal(DEAL), cut.log).is_won  # still checked by the engine
    assert cut.moves > full.moves and not full.cut_short


def test_running_out_of_work_is_not_being_cut_short() -> None:
    answer = solve(15, work=Work(decide=3))

    assert (answer.result, answer.nodes, answer.cut_short) == ("unknown", 3, False)


@pytest.mark.slow
def test_the_same_position_always_gets_the_same_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    first = hint(1, HINTED, seconds=NEVER)
    again = hint(1, HINTED, seconds=NEVER)
    slow_clock(monkeypatch, step=1.0)
    slowed = hint(1, HINTED, seconds=NEVER)

    assert first.result == "move" and first.moves_to_win is not None
    answers = {(h.result, h.action, h.moves_to_win, h.cut_short) for h in (first, again, slowed)}
    assert answers == {(first.result, first.action, first.moves_to_win, False)}
    assert replay(Deal(1), f"{HINTED} {first.action}").moves == 4


def test_a_hint_cut_short_by_its_cap_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    slow_clock(monkeypatch, step=10.0)

    answer = hint(1, HINTED, seconds=5)

    assert (answer.result, answer.action, answer.cut_short) == ("unknown", None, True)


def test_the_solver_reads_the_clock_in_one_place_only() -> None:
    # So that the cap is the only thing the time can change (see `Cap`).
    readers = set()
    for path in SOLVER.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module is not None:
                names = [node.module]
            if {"time", "datetime"} & set(names):
                readers.add(path.name)
    assert readers == {"work.py"}


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Work(decide=0), "decide"),
        (lambda: replace(HINT, quick_tries=-1), "not negative"),
        (lambda: replace(FIRST_WIN, beam_width=0), "1 wide"),
        (lambda: Cap(0), "positive"),
    ],
)
def test_nonsense_work_or_cap_is_refused(make: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_only_work_that_shortens_shortens() -> None:
    assert PAR.shortens and HINT.shortens
    assert not FIRST_WIN.shortens
