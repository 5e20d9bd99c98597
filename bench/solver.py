"""Benchmark of the solver: how many deals it decides, how fast, how short its wins are.

    .venv/bin/python bench/solver.py [--deals 1-200] [--seconds 10] [--shorten 0]

For every deal in the range it runs the solver from the start of the deal with
a budget of `--seconds` each, then replays every winning log with the rules
engine (`games.rules.replay`) and counts a log that does not end won as a false
win. It prints the won / lost / unknown counts, the median and 99th-percentile
time to decide a deal (until the first win or the proof), the total time per
deal including the shortening of each win (a fixed amount of work: a few
searches for shorter wins, then reordering the best ones so that they tap the
stock less, cut short after `--shorten` seconds; 0 skips it), and the median
move count of the wins.

The machine's load average is printed too: the machine may be shared, and the
times are only comparable between runs on an otherwise idle core.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.rules import Deal, Game, replay  # noqa: E402
from games.solver import solve_game  # noqa: E402


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


def run(task: tuple[int, float, float]) -> tuple[int, str, float, float, int, int, bool]:
    """Solve one deal; check a win with the rules engine (True at the end: a false win)."""
    number, seconds, shorten = task
    answer = solve_game(Game(Deal(number)), seconds=seconds, shorten_seconds=shorten)
    decided = answer.decided_seconds if answer.decided_seconds is not None else answer.seconds
    false_win = False
    if answer.result == "won":
        game = replay(Deal(number), answer.log)
        false_win = not game.is_won or game.moves != answer.moves
    return number, answer.result, decided, answer.seconds, answer.moves, answer.nodes, false_win


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=deal_range, default=deal_range("1-200"))
    parser.add_argument("--seconds", type=float, default=10.0, help="budget per deal (10)")
    parser.add_argument(
        "--shorten", type=float, default=0.0, help="at most this long shortening each win (0)"
    )
    parser.add_argument(
        "--jobs", type=int, default=1, help="deals solved at once, one process each (1)"
    )
    parser.add_argument("--verbose", action="store_true", help="one line per deal")
    args = parser.parse_args()

    print(
        f"python {sys.version.split()[0]} on {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.2f} (1 min) at the start"
    )
    counts = {"won": 0, "lost": 0, "unknown": 0}
    decide_times: list[float] = []
    total_times: list[float] = []
    lengths: list[int] = []
    false_wins = 0
    started = time.perf_counter()
    tasks = [(number, args.seconds, args.shorten) for number in args.deals]
    with multiprocessing.Pool(args.jobs) as pool:
        for number, result, decided, seconds, moves, nodes, false_win in pool.imap(run, tasks):
            counts[result] += 1
            decide_times.append(decided)
            total_times.append(seconds)
            if result == "won":
                lengths.append(moves)
                false_wins += false_win
            if args.verbose:
                print(
                    f"deal {number}: {result} in {decided:.3f} s "
                    f"({seconds:.3f} s in all), {moves} moves, {nodes} nodes",
                    flush=True,
                )
    elapsed = time.perf_counter() - started
    deals = len(args.deals)
    decided_count = counts["won"] + counts["lost"]
    print(
        f"deals {args.deals.start}..{args.deals.stop - 1}, budget {args.seconds:g} s, "
        f"shortening {args.shorten:g} s, {args.jobs} at once: "
        + ", ".join(f"{name} {n}" for name, n in counts.items())
        + f" ({100 * decided_count / deals:.1f}% decided), false wins {false_wins}"
    )
    print(
        f"time to decide: median {statistics.median(decide_times):.3f} s, "
        f"p99 {percentile(decide_times, 0.99):.3f} s, max {max(decide_times):.3f} s"
    )
    print(
        f"time in all: median {statistics.median(total_times):.3f} s, "
        f"mean {statistics.fmean(total_times):.3f} s; the run took {elapsed:.1f} s"
    )
    if lengths:
        print(
            f"winning logs: median {statistics.median(lengths):g} moves, "
            f"min {min(lengths)}, max {max(lengths)}"
        )
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the end")


if __name__ == "__main__":
    main()
