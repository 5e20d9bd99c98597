"""`python -m games.solver solve CODE [--seconds N] [--json]`: the answer and the exit codes."""

from __future__ import annotations

import io
import json

from games.rules import replay
from games.solver.cli import main


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_solve_prints_a_win_that_replays() -> None:
    code, out, _ = run("solve", " eh1-n-aaaaaab ", "--seconds", "60", "--json")
    answer = json.loads(out)
    assert code == 0
    assert set(answer) == {"result", "moves", "log", "nodes", "seconds"}
    assert answer["result"] == "won"
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


def test_solve_without_json_prints_the_answer_then_the_log() -> None:
    code, out, _ = run("solve", "EH1-N-AAAAAAB", "--seconds", "60")
    summary, log = out.splitlines()
    assert code == 0
    assert summary.startswith("EH1-N-AAAAAAB: won in ")
    game = replay("EH1-N-AAAAAAB", log)
    assert game.is_won and f"won in {game.moves} moves" in summary


def test_the_engine_command_line_has_no_solve() -> None:
    from games.rules.cli import main as engine_main

    err = io.StringIO()
    try:
        engine_main(["solve", "EH1-N-AAAAAAB"], io.StringIO(), err)
    except SystemExit as stop:
        assert stop.code == 2
    else:
        raise AssertionError("the engine's command line accepted 'solve'")
