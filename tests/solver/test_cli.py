"""`python -m games.rules solve CODE [--seconds N]`: the JSON answer and the exit codes."""

from __future__ import annotations

import io
import json

from games.rules import replay
from games.rules.cli import main


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_solve_prints_a_win_that_replays() -> None:
    code, out, _ = run("solve", " eh1-n-aaaaaab ", "--seconds", "60")
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
