"""Where a ranked submission's time goes, step by step.

    .venv/bin/python bench/submit_steps.py [--games 300] [--logs 900]

It prepares players, attempts and logs as `bench/submit.py` does (the same
settings and database, 400-800-action logs of random legal play with their
per-action times), then posts ranked submissions one at a time through the
ASGI application (Django's `AsyncClient` on one event loop: the view runs in
its worker thread and the channel layer on the loop, as under uvicorn), each
to `POST /api/games/`, then as many to the bare endpoint. Each step of the
write is wrapped in a timer (by patching the function the service calls), and
it prints per step the mean wall time and the worker thread's CPU time, and
the calls per submission. What is gathered after the commits (the mirror's
new records, the attempt's watchers) runs in the loop's executor, once for
the submissions of 50 ms: its CPU is that thread's, per submission, and its
calls fewer than one. "Rest of the request" is the whole request less the
steps on its path, that is DRF's parsing and authentication, the view and
Django's handling around it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.databases import ensure_database  # noqa: E402
from bench.submit import prepare  # noqa: E402  (sets the bench's environment)

# (label, module, attribute): the steps of a ranked submission, in the order they run.
STEPS: list[tuple[str, str, str]] = [
    ("connect to PostgreSQL", "django.db.backends.postgresql.base", "DatabaseWrapper.connect"),
    ("lock the player's row", "games.services", "_active_player_lock"),
    ("the open attempt, read under the lock", "games.services", "_open_attempt"),
    ("replay the log", "games.services", "log_replay"),
    ("check the per-action times", "games.services", "times_check"),
    ("review signals", "games.services", "review_game"),
    ("the game's row", "games.models", "Game.save"),
    ("board entries and count changes", "leaderboards.changes", "board_entries_offer"),
    ("board mirror: record pending (Redis)", "leaderboards.changes", "board_mirror_write"),
    ("player's record", "leaderboards.changes", "player_stats_count"),
    ("the commit", "django.db.backends.postgresql.base", "DatabaseWrapper.commit"),
    ("live boards told after commit (handed to the loop)", "leaderboards.live", "board_changed"),
    ("response body", "games.api", "GameOutput.data"),
    # Gathered after the commits (easyharp_site.layer.Gathering), in a thread of the
    # loop's executor, off the request's path: their calls are per gathering.
    ("board mirror: new records (Redis), gathered", "leaderboards.mirror", "_stores.flush"),
    ("the attempt's watchers (their counts), gathered", "games.live", "_closed.flush"),
]
OFF_REQUEST = {label for label, _, _ in STEPS[-2:]}

wall: dict[str, float] = defaultdict(float)
cpu: dict[str, float] = defaultdict(float)
calls: dict[str, int] = defaultdict(int)


def timer(label: str, function: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        w, c = time.perf_counter(), time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            wall[label] += time.perf_counter() - w
            cpu[label] += time.thread_time() - c
            calls[label] += 1

    return timed


def patch_steps() -> None:
    import importlib
    import inspect

    for label, module_name, attribute in STEPS:
        owner: Any = importlib.import_module(module_name)
        *path, name = attribute.split(".")
        for part in path:
            owner = getattr(owner, part)
        found = inspect.getattr_static(owner, name)
        if isinstance(found, property):
            assert found.fget is not None
            setattr(owner, name, property(timer(label, found.fget)))
        else:
            setattr(owner, name, timer(label, found))


async def post_all(
    path: str, tokens: list[str], bodies: list[dict[str, Any]]
) -> tuple[float, float]:
    """Post each body from its player, one at a time: (wall s, process CPU s)."""
    from django.conf import settings
    from django.test import AsyncClient

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    client = AsyncClient()
    process = time.process_time()
    start = time.perf_counter()
    for token, body in zip(tokens, bodies, strict=True):
        response = await client.post(
            path,
            json.dumps(body),
            content_type="application/json",
            headers={"authorization": f"Token {token}"},
        )
        assert response.status_code == 201, response.content[:300]
    return time.perf_counter() - start, time.process_time() - process


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=300, help="ranked submissions timed")
    parser.add_argument("--logs", type=int, default=900)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()

    ensure_database(os.environ["DATABASE_URL"])
    warm = 20
    deal, tokens, bodies = prepare(2 * (args.games + warm), args.logs, args.seed)
    print(f"deal {deal}; {args.games} ranked submissions, then {args.games} bare ones")
    patch_steps()
    # Each ranked game is its player's first and has its own log, as in bench/submit.py.
    ranked_tokens, bare_tokens = tokens[: args.games + warm], tokens[args.games + warm :]
    logs = (bodies * (1 + (args.games + warm) // len(bodies)))[: args.games + warm]
    asyncio.run(post_all("/api/games/", ranked_tokens[:warm], logs[:warm]))
    wall.clear(), cpu.clear(), calls.clear()
    ranked = asyncio.run(post_all("/api/games/", ranked_tokens[warm:], logs[warm:]))
    steps_wall, steps_cpu = dict(wall), dict(cpu)
    steps_calls = dict(calls)
    wall.clear(), cpu.clear(), calls.clear()
    bare = asyncio.run(post_all("/bench/bare-games/", bare_tokens[: args.games], logs[warm:]))
    n = args.games
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average {load}; per submission, mean of {n}:")
    print(f"| {'Step':<48} | Wall | Worker CPU | Calls |")
    print(f"| {'---':<48} | --- | --- | --- |")
    # The connection opens with the authentication's first query: taken out of the rest.
    nested = {STEPS[0][0]}
    for label, _, _ in STEPS:
        if label not in steps_calls:
            continue
        print(
            f"| {label:<48} | {1000 * steps_wall[label] / n:5.2f} ms "
            f"| {1000 * steps_cpu[label] / n:5.2f} ms | {steps_calls[label] / n:.1f} |"
        )
    accounted = sum(v for k, v in steps_wall.items() if k not in nested | OFF_REQUEST)
    accounted += steps_wall.get(STEPS[0][0], 0.0)
    rest = "rest of the request (DRF, authentication, Django)"
    print(f"| {rest:<48} | {1000 * (ranked[0] - accounted) / n:5.2f} ms | | |")
    print(
        f"| {'whole ranked submission':<48} | {1000 * ranked[0] / n:5.2f} ms "
        f"| process {1000 * ranked[1] / n:5.2f} ms | |"
    )
    print(
        f"| {'whole bare submission':<48} | {1000 * bare[0] / n:5.2f} ms "
        f"| process {1000 * bare[1] / n:5.2f} ms | |"
    )


if __name__ == "__main__":
    main()
