"""`python -m games.solver solve CODE [--seconds N] [--json]`: the answer and the exit codes."""

from __future__ import annotations

import functools
import io
import json

import pytest

from games.rules import replay
from games.solver import Solution, cli, solve
from games.solver.cli import main


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@functools.cache
def _solved(code: str, seconds: float) -> Solution:
    return solve(code, seconds=seconds)


@pytest.fixture
def solve_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real solver behind the command line, run once per deal for this
    module: its tests read one answer in the command's two outputs."""
    monkeypatch.setattr(cli, "solve", lambda deal, seconds: _solved(deal.code, seconds))


@pytest.mark.slow
@pytest.mark.usefixtures("solve_once")
def test_solve_prints_a_win_that_replays() -> None:
    code, out, _ = run("solve", " eh1-n-aaaaaab ", "--seconds", "3600", "--json")
    answer = json.loads(out)
    assert code == 0
    assert set(answer) == {"result", "moves", "log", "nodes", "seconds", "cut_short"}
    assert (answer["result"], answer["cut_short"]) == ("won", False)
    game = replay("EH1-N-AAAAAAB", answer["log"])
    assert game.is_won and game.moves == answer["moves"]
    assert answer["nodes"] > 0 and answer["seconds"] >= 0


def test_solve_refuses_a_bad_code_or_budget() -> None:
    code, out, err = run("solve", "EH1-N-AAAAAAA")
    assert (code, out) == (2, "")
    assert "1 to 999,999" in err and len(err.splitlines()) == 1
    code, out, err = run("solve", "EH1-N-AAAAAAB", "--seconds", "0")
    assert (code, out) == (2, "")
    assert "--seconds" in err


@pytest.mark.slow
@pytest.mark.usefixtures("solve_once")
def test_solve_without_json_prints_the_answer_then_the_log() -> None:
    code, out, _ = run("solve", "EH1-N-AAAAAAB", "--seconds", "3600")
    summary, log = out.splitlines()
    assert code == 0
    assert summary.startswith("EH1-N-AAAAAAB: won in ")
    game = replay("EH1-N-AAAAAAB", log)
    assert game.is_won and f"won in {game.moves} moves" in summary


def test_solve_says_when_the_time_cap_cut_it_short() -> None:
    code, out, _ = run("solve", "EH1-N-AAAAAAB", "--seconds", "0.000001")
    assert code == 0
    assert out.startswith("EH1-N-AAAAAAB: unknown (")
    assert out.rstrip().endswith("cut short by the time cap)")
    code, out, _ = run("solve", "EH1-N-AAAAAAB", "--seconds", "0.000001", "--json")
    assert (json.loads(out)["result"], json.loads(out)["cut_short"]) == ("unknown", True)


def test_the_engine_command_line_has_no_solve() -> None:
    from games.rules.cli import main as engine_main

    err = io.StringIO()
    try:
        engine_main(["solve", "EH1-N-AAAAAAB"], io.StringIO(), err)
    except SystemExit as stop:
        assert stop.code == 2
    else:
        raise AssertionError("the engine's command line accepted 'solve'")
