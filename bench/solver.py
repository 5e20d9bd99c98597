"""Benchmark of the solver: how many deals it decides, how fast, how short its wins are.

    .venv/bin/python bench/solver.py [--deals 1-200] [--work par|hint|first] [--seconds 60]

For every deal in the range it runs the solver from the start of the deal with
the chosen work (`games.solver.PAR`, the par of a deal of the day, by
default; `hint`, a hint's work; `first`, the first win as found) and the time
cap `--seconds`, then replays every winning log with the rules engine
(`games.rules.replay`) and counts a log that does not end won as a false win.
It prints the won / lost / unknown counts, how many answers the cap cut short
(those would not be stored as a par), the median and 99th-percentile time to
decide a deal (until the first win or the proof), the time in all including
the shortening of each win (the time a deal of the day takes to choose when
its first candidate is taken), the positions expanded, and the median move
count of the wins.

The work is counted, so the move counts are the same on any machine; only the
times depend on it. The machine's load average is printed too: the machine
may be shared, and the times are only comparable between runs on an otherwise
idle core.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from dataclasses import fields
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.rules import Deal, Game, replay  # noqa: E402
from games.solver import FIRST_WIN, HINT, PAR, Work, solve_game  # noqa: E402

WORKS = {"par": PAR, "hint": HINT, "first": FIRST_WIN}


def deal_range(text: str) -> range:
    """``"1-200"`` (or a single number) as a range of deal numbers."""
    first, _, last = text.partition("-")
    try:
        low, high = int(first), int(last or first)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a deal range is like 1-200, not {text!r}") from None
    if not 1 <= low <= high:
        raise argparse.ArgumentTypeError(f"a deal range is like 1-200, not {text!r}")
    return range(low, high + 1)


def percentile(values: list[float], fraction: float) -> float:
    """The value below which ``fraction`` of ``values`` lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def run(task: tuple[int, str, float]) -> tuple[int, str, float, float, int, int, bool, bool]:
    """Solve one deal; check a win with the rules engine (the last value: a false win)."""
    number, work, seconds = task
    answer = solve_game(Game(Deal(number)), work=WORKS[work], seconds=seconds)
    decided = answer.decided_seconds if answer.decided_seconds is not None else answer.seconds
    false_win = False
    if answer.result == "won":
        game = replay(Deal(number), answer.log)
        false_win = not game.is_won or game.moves != answer.moves
    return (
        number,
        answer.result,
        decided,
        answer.seconds,
        answer.moves,
        answer.nodes,
        answer.cut_short,
        false_win,
    )


def describe(work: Work) -> str:
    """The work's counts in a line."""
    return ", ".join(f"{field.name} {getattr(work, field.name):,}" for field in fields(work))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=deal_range, default=deal_range("1-200"))
    parser.add_argument("--work", choices=sorted(WORKS), default="par", help="(par)")
    parser.add_argument("--seconds", type=float, default=60.0, help="time cap per deal (60)")
    parser.add_argument(
        "--jobs", type=int, default=1, help="deals solved at once, one process each (1)"
    )
    parser.add_argument("--verbose", action="store_true", help="one line per deal")
    args = parser.parse_args()

    print(
        f"python {sys.version.split()[0]} on {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.2f} (1 min) at the start"
    )
    print(f"work {args.work}: {describe(WORKS[args.work])}")
    counts = {"won": 0, "lost": 0, "unknown": 0}
    decide_times: list[float] = []
    total_times: list[float] = []
    nodes_spent: list[int] = []
    lengths: list[int] = []
    cut_short = 0
    false_wins = 0
    started = time.perf_counter()
    tasks = [(number, args.work, args.seconds) for number in args.deals]
    with multiprocessing.Pool(args.jobs) as pool:
        for number, result, decided, seconds, moves, nodes, cut, false_win in pool.imap(run, tasks):
            counts[result] += 1
            decide_times.append(decided)
            total_times.append(seconds)
            nodes_spent.append(nodes)
            cut_short += cut
            if result == "won":
                lengths.append(moves)
                false_wins += false_win
            if args.verbose:
                print(
                    f"deal {number}: {result} in {decided:.3f} s "
                    f"({seconds:.3f} s in all), {moves} moves, {nodes} nodes"
                    + (", cut short" if cut else ""),
                    flush=True,
                )
    elapsed = time.perf_counter() - started
    deals = len(args.deals)
    decided_count = counts["won"] + counts["lost"]
    print(
        f"deals {args.deals.start}..{args.deals.stop - 1}, work {args.work}, "
        f"cap {args.seconds:g} s, {args.jobs} at once: "
        + ", ".join(f"{name} {n}" for name, n in counts.items())
        + f" ({100 * decided_count / deals:.1f}% decided), cut short {cut_short}, "
        f"false wins {false_wins}"
    )
    print(
        f"time to decide: median {statistics.median(decide_times):.3f} s, "
        f"p99 {percentile(decide_times, 0.99):.3f} s, max {max(decide_times):.3f} s"
    )
    print(
        f"time in all: median {statistics.median(total_times):.3f} s, "
        f"p99 {percentile(total_times, 0.99):.3f} s, max {max(total_times):.3f} s, "
        f"mean {statistics.fmean(total_times):.3f} s; the run took {elapsed:.1f} s"
    )
    print(
        f"positions expanded: median {statistics.median(nodes_spent):,.0f}, "
        f"max {max(nodes_spent):,}"
    )
    if lengths:
        print(
            f"winning logs: median {statistics.median(lengths):g} moves, "
            f"min {min(lengths)}, max {max(lengths)}"
        )
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the end")


if __name__ == "__main__":
    main()
