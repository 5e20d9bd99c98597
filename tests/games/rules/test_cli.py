"""The command line: `python -m games.rules deal|replay`, its output and exit codes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from games.rules import Game
from games.rules.cli import main
from tests.paths import ROOT


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_deal_prints_the_starting_table() -> None:
    code, out, _ = run("deal", " eh1-n-aaaaaab ")
    lines = out.splitlines()
    assert code == 0
    assert lines[0].startswith("EH1-N-AAAAAAB")
    assert lines[1] == "stock 59   waste 0 (top --)"
    assert lines[3] == "1: 6D"
    assert lines[11] == "9: ## ## ## ## ## ## ## ## JC"


def test_deal_json_prints_the_table_dict() -> None:
    code, out, _ = run("deal", "EH1-N-AAAAAAB", "--json")
    assert code == 0
    assert json.loads(out) == Game(1).table()


def test_replay_prints_the_result(tmp_path: Path) -> None:
    log = tmp_path / "game.txt"
    log.write_text("S w9\n s\n")
    code, out, _ = run("replay", "EH1-N-AAAAAAB", str(log))
    assert code == 0
    assert json.loads(out) == {
        "deal": "EH1-N-AAAAAAB",
        "score": 5,
        "moves": 3,
        "won": False,
        "actions": 3,
    }


def test_replay_of_a_refused_log_prints_the_error_and_exits_1(tmp_path: Path) -> None:
    log = tmp_path / "game.txt"
    log.write_text("S S 37")
    code, out, _ = run("replay", "EH1-N-AAAAAAB", str(log))
    assert code == 1
    error = json.loads(out)["error"]
    assert (error["index"], error["token"], error["code"]) == (3, "37", "column_refuses")
    assert "4H" in error["reason"]


def test_replay_of_an_unreadable_log_exits_1(tmp_path: Path) -> None:
    log = tmp_path / "game.txt"
    log.write_text("S ?")
    code, out, _ = run("replay", "EH1-N-AAAAAAB", str(log))
    assert code == 1
    assert json.loads(out)["error"]["code"] == "unreadable_action"


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "EH1-N-AAAAAAA", "-"],
        ["deal", "EH2-N-AAAAAAB"],
        ["replay", "EH1-N-AAAAAAB", "/no/such/file"],
    ],
)
def test_a_bad_code_or_file_exits_2_with_one_line(argv: list[str]) -> None:
    code, out, err = run(*argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and "error" in err


@pytest.mark.parametrize("argv", [[], ["bogus"], ["deal"], ["deal", "EH1-N-AAAAAAB", "--nope"]])
def test_bad_usage_exits_2_with_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error" in err


def _python(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO")}
    return subprocess.run(
        [sys.executable, *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
    )


def test_python_m_replay_reads_stdin_without_django_settings() -> None:
    done = _python("-m", "games.rules", "replay", "EH1-N-AAAAAAB", "-", stdin="S W9 S")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["score"] == 5
    refused = _python("-m", "games.rules", "replay", "EH1-N-AAAAAAB", stdin="S U U")
    assert refused.returncode == 1
    assert json.loads(refused.stdout)["error"]["code"] == "nothing_to_undo"
    bad = _python("-m", "games.rules", "replay", "nonsense")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_the_engine_imports_nothing_from_django() -> None:
    done = _python(
        "-c",
        "import sys, games.rules, games.rules.cli; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_log_that_is_not_utf8_exits_2(tmp_path: Path) -> None:
    log = tmp_path / "game.txt"
    log.write_bytes(b"S \xff\xfe W9")
    code, out, err = run("replay", "EH1-N-AAAAAAB", str(log))
    assert (code, out) == (2, "") and "cannot read the log" in err
    done = subprocess.run(
        [sys.executable, "-m", "games.rules", "replay", "EH1-N-AAAAAAB", "-"],
        input=b"S \xff W9",
        capture_output=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 2 and done.stderr.count(b"\n") == 1
