"""Benchmark of the rules engine: replay speed and the memory of a Game.

    .venv/bin/python bench/engine.py [--games 40] [--length 2000] [--repeat 7]

It first plays random but legal games (a fixed seed, so every run replays the
same logs): stock taps and recycles, moves between columns, king-headed runs,
cards to and back from the foundations, and undos. Then it replays every log,
as text, from the deal code, exactly as a submission is checked, and prints the
actions per second of the best and the median repeat. Last it measures a Game
after a typical 600-action game, by walking its objects and with tracemalloc.

The machine's load average is printed too: the figures are only comparable
between runs on an otherwise idle core.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.rules import Deal, Game, replay  # noqa: E402
from games.rules.actions import TOKENS  # noqa: E402


def random_log(deal: Deal, length: int, rng: random.Random) -> str:
    """A legal log of `length` actions mixing every kind of action."""
    game = Game(deal)
    while len(game.log) < length and not game.is_won:
        legal = list(game.legal_actions())
        roll = rng.random()
        if roll < 0.08 and "U" in legal:
            token = "U"
        elif roll < 0.11 and any(t.startswith("F") for t in legal):
            token = rng.choice([t for t in legal if t.startswith("F")])
        elif roll < 0.40 and "S" in legal:
            token = "S"
        else:
            moves = [t for t in legal if t not in ("U", "S") and not t.startswith("F")]
            # Prefer the foundations so that games go somewhere, and sometimes
            # write "F" instead of the slot, as players do.
            to_foundation = [t for t in moves if "F" in t[1:]]
            if to_foundation and rng.random() < 0.5:
                token = rng.choice(to_foundation)
                if rng.random() < 0.5:
                    token = token[:-1]
            elif moves:
                token = rng.choice(moves)
            else:
                token = "S" if "S" in legal else "U"
        game.play(token)
    return " ".join(game.log)


def deep_size(root: object, skip: set[int]) -> int:
    """Bytes of every object reachable from `root`, except those in `skip` (shared)."""
    seen: set[int] = set()
    stack = [root]
    total = 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or id(obj) in skip:
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, list | tuple | set | frozenset) or type(obj).__name__ == "deque":
            stack.extend(obj)  # type: ignore[arg-type]
        elif hasattr(obj, "__slots__"):
            for name in type(obj).__slots__:
                if hasattr(obj, name):
                    stack.append(getattr(obj, name))
    return total


def shared_objects() -> set[int]:
    """Objects every Game shares: the compiled actions and their undo records, small ints."""
    skip: set[int] = set()
    for compiled in TOKENS.values():
        skip.add(id(compiled))
        skip.add(id(compiled[3]))
        skip.add(id(compiled[4]))
        skip.update(id(record) for record in compiled[4])
    skip.update(id(n) for n in range(-5, 257))  # CPython's cached small ints
    return skip


def measure_speed(logs: list[tuple[str, str]], repeat: int) -> tuple[list[float], list[float]]:
    """Actions per second of each repeat: by the wall clock and by this process's CPU time.

    On a shared machine the CPU-time figure is the steadier one: it leaves out
    the time the process waited for a core.
    """
    actions = sum(len(log.split()) for _, log in logs)
    wall_rates, cpu_rates = [], []
    for _ in range(repeat):
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        for code, log in logs:
            replay(code, log)
        wall_rates.append(actions / (time.perf_counter() - wall))
        cpu_rates.append(actions / (time.process_time() - cpu))
    return wall_rates, cpu_rates


def vector_logs() -> list[tuple[str, str]]:
    """The accepted logs of the shared conformance vectors (made by another implementation)."""
    path = Path(__file__).resolve().parent.parent / "tests" / "vectors" / "games.jsonl"
    if not path.exists():
        return []
    vectors = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [(v["deal"], v["log"]) for v in vectors if "refused_at" not in v]


def measure_memory(code: str, log: str) -> tuple[int, int, int]:
    game = replay(code, log)
    own = deep_size(game, shared_objects() | {id(game.deal)})
    with_deal = deep_size(game, shared_objects())
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = replay(code, log)
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del kept
    return own, with_deal, after - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=40, help="how many logs (default 40)")
    parser.add_argument("--length", type=int, default=2000, help="actions per log (default 2000)")
    parser.add_argument("--repeat", type=int, default=7, help="timed repeats (default 7)")
    parser.add_argument("--seed", type=int, default=2026, help="random seed (default 2026)")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    deals = [Deal(rng.randint(1, 999_999)) for _ in range(args.games)]
    logs = [(deal.code, random_log(deal, args.length, rng)) for deal in deals]
    counts = {kind: 0 for kind in ("S", "U", "column", "foundation", "back")}
    for _, log in logs:
        for token in log.split():
            if token in ("S", "U"):
                counts[token] += 1
            elif token.startswith("F"):
                counts["back"] += 1
            elif "F" in token:
                counts["foundation"] += 1
            else:
                counts["column"] += 1
    total = sum(counts.values())
    print(
        f"python {sys.version.split()[0]} on {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.2f} (1 min)"
    )
    print(
        f"{len(logs)} logs, {total:,} actions: "
        + ", ".join(f"{kind} {100 * n / total:.0f}%" for kind, n in counts.items())
    )

    wall_rates, cpu_rates = measure_speed(logs, args.repeat)
    for name, rates in (("wall clock", wall_rates), ("CPU time", cpu_rates)):
        print(
            f"replay ({name}): best {max(rates):,.0f} actions/s, "
            f"median {statistics.median(rates):,.0f} actions/s ({args.repeat} repeats)"
        )
    vectors = vector_logs()
    if vectors:
        _, vector_cpu = measure_speed(vectors, args.repeat)
        size = sum(len(log.split()) for _, log in vectors)
        print(
            f"the {len(vectors)} accepted logs of tests/vectors ({size:,} actions): "
            f"best {max(vector_cpu):,.0f} actions/s (CPU time)"
        )
    typical = [(code, " ".join(log.split()[:600])) for code, log in logs[:20]]
    per_game = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        for code, log in typical:
            replay(code, log)
        per_game.append((time.perf_counter() - start) / len(typical))
    print(
        f"a 600-action game (from its deal code, deal cached) validates in "
        f"{min(per_game) * 1e6:,.0f} µs best, {statistics.median(per_game) * 1e6:,.0f} µs median"
    )

    own, with_deal, traced = measure_memory(*typical[0])
    print(
        f"Game after 600 actions: {own:,} bytes of its own objects, {with_deal:,} with its Deal; "
        f"tracemalloc: {traced:,} bytes allocated and kept by replay()"
    )


if __name__ == "__main__":
    main()
