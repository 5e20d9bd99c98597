"""The solver's command line: ``python -m games.solver solve CODE [--seconds N] [--json]``.

It solves with the par's work (`games.solver.PAR`): the answer is the deal's
par, whatever the machine, unless the time cap ``--seconds`` cut the work
short, which the answer then says. Exit codes as the engine's command line:
0 done (whatever the answer), 2 a bad deal code or bad usage, with a one-line
message on stderr.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import IO, Any

from games.rules.cli import EXIT_OK, Parser, UsageError, deal_from, run
from games.solver.deals import solve
from games.solver.work import CAP_SECONDS

__all__ = ["main", "build_parser"]

SECONDS_MAX = 3600


def _solve(args: argparse.Namespace, out: IO[str], _err: IO[str]) -> int:
    deal = deal_from(args.code)
    if not 0 < args.seconds <= SECONDS_MAX:
        raise UsageError(
            f"--seconds is more than 0 and at most {SECONDS_MAX}, not {args.seconds:g}"
        )
    answer = solve(deal, seconds=args.seconds)
    result: dict[str, Any] = {
        "result": answer.result,
        "moves": answer.moves,
        "log": " ".join(answer.log),
        "nodes": answer.nodes,
        "seconds": round(answer.seconds, 3),
        "cut_short": answer.cut_short,
    }
    if args.json:
        out.write(json.dumps(result) + "\n")
        return EXIT_OK
    summary = f"{deal.code}: {answer.result}"
    if answer.result == "won":
        summary += f" in {answer.moves} moves"
    cut = ", cut short by the time cap" if answer.cut_short else ""
    out.write(f"{summary} ({answer.nodes} positions, {answer.seconds:.1f} s{cut})\n")
    if answer.log:
        out.write(result["log"] + "\n")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = Parser(prog="python -m games.solver", description="Easy Harp solver (EH1).")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    solve_parser = commands.add_parser("solve", help="search a deal for a win and print it")
    solve_parser.add_argument("code", help="a deal code such as EH1-N-AAAAAAB")
    solve_parser.add_argument(
        "--seconds",
        type=float,
        default=CAP_SECONDS,
        help=f"the time cap (default {CAP_SECONDS:g} seconds): the work is counted, "
        "the cap only stops it",
    )
    solve_parser.add_argument(
        "--json", action="store_true", help="print the answer as one line of JSON"
    )
    solve_parser.set_defaults(handler=_solve)
    return parser


def main(
    argv: Sequence[str] | None = None, out: IO[str] | None = None, err: IO[str] | None = None
) -> int:
    """Run the solver's command line with `argv` (default: sys.argv[1:]); return the exit code."""
    return run(build_parser(), argv, out, err)
