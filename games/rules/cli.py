"""The command line: ``python -m games.rules deal CODE`` and ``... replay CODE [FILE|-]``.

Exit codes: 0 done, 1 the log was refused, 2 a bad deal code, an unreadable
file or bad usage (with a one-line message on stderr). Each subcommand is one
`_add_<name>` function that registers its arguments and its handler, so a new
subcommand is one more such function and one line in `build_parser`. The
solver's command line (`python -m games.solver`) is built from the same pieces.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import IO, Any, NoReturn

from .deal import Deal
from .errors import ActionError
from .game import Game, replay

__all__ = ["main", "build_parser", "format_table", "run", "deal_from", "Parser", "UsageError"]

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2

Handler = Callable[[argparse.Namespace, IO[str], IO[str]], int]


class UsageError(Exception):
    """Bad input on the command line: reported in one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One line, not argparse's usage block: scripts read the first line.
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def deal_from(text: str) -> Deal:
    try:
        return Deal.from_code(text)
    except ValueError as error:
        raise UsageError(str(error)) from None


def format_table(table: dict[str, Any]) -> str:
    """A table dict (`Game.table()`) as a few lines of text; face-down cards show as ``##``."""
    waste_top = table["waste_top"] or "--"
    foundations = "  ".join(
        f"F{slot}:{pile['top'] or '--'}" for slot, pile in enumerate(table["foundations"], start=1)
    )
    lines = [
        f"{table['deal']}   score {table['score']}   moves {table['moves']}"
        + ("   won" if table["won"] else ""),
        f"stock {table['stock']}   waste {table['waste']} (top {waste_top})",
        foundations,
    ]
    for number, column in enumerate(table["columns"], start=1):
        cards = ["##"] * column["down"] + column["up"]
        lines.append(f"{number}: {' '.join(cards)}".rstrip())
    return "\n".join(lines)


def _deal(args: argparse.Namespace, out: IO[str], _err: IO[str]) -> int:
    table = Game(deal_from(args.code)).table()
    out.write((json.dumps(table) if args.json else format_table(table)) + "\n")
    return EXIT_OK


def _add_deal(commands: Any) -> None:
    parser = commands.add_parser("deal", help="show the starting table of a deal")
    parser.add_argument("code", help="a deal code such as EH1-N-AAAAAAB")
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    parser.set_defaults(handler=_deal)


def _read_log(source: str) -> str:
    try:
        if source == "-":
            return sys.stdin.buffer.read().decode("utf-8")
        with open(source, encoding="utf-8") as file:
            return file.read()
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read the log {source!r}: {error}") from None


def _replay(args: argparse.Namespace, out: IO[str], _err: IO[str]) -> int:
    deal = deal_from(args.code)
    log = _read_log(args.log)
    try:
        game = replay(deal, log)
    except ActionError as refused:
        out.write(json.dumps({"error": refused.as_dict()}) + "\n")
        return EXIT_REFUSED
    result = {
        "deal": deal.code,
        "score": game.score,
        "moves": game.moves,
        "won": game.is_won,
        "actions": len(game.log),
    }
    out.write(json.dumps(result) + "\n")
    return EXIT_OK


def _add_replay(commands: Any) -> None:
    parser = commands.add_parser("replay", help="check a move log and print its result as JSON")
    parser.add_argument("code", help="a deal code such as EH1-N-AAAAAAB")
    parser.add_argument(
        "log", nargs="?", default="-", help="a file holding the log, or - (the default) for stdin"
    )
    parser.set_defaults(handler=_replay)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = Parser(prog="python -m games.rules", description="Easy Harp rules engine (EH1).")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_deal(commands)
    _add_replay(commands)
    return parser


def run(
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None = None,
    out: IO[str] | None = None,
    err: IO[str] | None = None,
) -> int:
    """Parse `argv` (default: sys.argv[1:]) with `parser`, run its handler, return the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args, out, err)
    except UsageError as error:
        err.write(f"{parser.prog}: error: {error}\n")
        return EXIT_USAGE


def main(
    argv: Sequence[str] | None = None, out: IO[str] | None = None, err: IO[str] | None = None
) -> int:
    """Run the engine's command line with `argv` (default: sys.argv[1:]); return the exit code."""
    return run(build_parser(), argv, out, err)
