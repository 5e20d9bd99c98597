"""Fault benchmark: restart PostgreSQL and stop/start Redis during bench/load.py's load.

Runs the load benchmark (same players, watchers and checks) and, while it
runs, takes the backends away for a few seconds each:

1. PostgreSQL: stopped, down for --db-outage seconds, started again
   (`pg_ctlcluster --skip-systemctl-redirect <version> main stop|start`);
2. Redis: `redis-cli shutdown nosave`, down for --redis-outage seconds, then
   started again as .ci/run starts it.

It prints a per-second timeline of answers (2xx / 4xx / 503 / no answer) with
the outages marked, how long the service took to answer 2xx again after each
backend came back, whether every 503 was in the documented error shape, and
then the load benchmark's own report and checks: every game the server
accepted is stored exactly once, both boards equal a recomputation from the
stored games, every live board caught up. Exit code 1 when a check fails.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/eh_hard \\
    REDIS_URL=redis://127.0.0.1:6379/4 \\
    .venv/bin/python bench/faults.py --players 40 --watchers 40 --duration 45

PostgreSQL and Redis are the machine's shared services: every user of them sees
the outages, so keep them short and run this rarely.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load  # noqa: E402

PG_VERSION = sorted(os.listdir("/etc/postgresql"))[-1] if os.path.isdir("/etc/postgresql") else ""
REDIS_START = [
    "redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "-::1", "--port", "6379",
    "--save", "", "--appendonly", "no", "--dir", "/var/lib/redis",
    "--logfile", "/var/log/redis/ci.log",
]  # fmt: skip


@dataclass
class Outage:
    name: str
    down_at: float = 0.0  # seconds since the load started
    up_at: float = 0.0
    commands: list[str] = field(default_factory=list)


def _run(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    return f"$ {' '.join(command)} -> {done.returncode} {done.stderr.strip()[:120]}"


def _wait_until(command: list[str], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if subprocess.run(command, capture_output=True, timeout=10, check=False).returncode == 0:
            return True
        time.sleep(0.2)
    return False


def faults(
    args: argparse.Namespace, outages: list[Outage]
) -> Callable[[load.Stats], Awaitable[None]]:
    """The side task run during the load: the two outages, one after the other."""

    async def side(stats: load.Stats) -> None:
        def now() -> float:
            return time.monotonic() - stats.started

        await asyncio.sleep(args.db_at)
        database = Outage("PostgreSQL")
        outages.append(database)
        database.down_at = now()
        stop = ["pg_ctlcluster", "--skip-systemctl-redirect", PG_VERSION, "main", "stop"]
        database.commands.append(await asyncio.to_thread(_run, stop))
        await asyncio.sleep(args.db_outage)
        start = ["pg_ctlcluster", "--skip-systemctl-redirect", PG_VERSION, "main", "start"]
        database.commands.append(await asyncio.to_thread(_run, start))
        ready = ["pg_isready", "-h", "127.0.0.1", "-p", "5432", "-q"]
        await asyncio.to_thread(_wait_until, ready, 60)
        database.up_at = now()

        await asyncio.sleep(args.redis_after)
        cache = Outage("Redis")
        outages.append(cache)
        cache.down_at = now()
        shutdown = ["redis-cli", "-p", "6379", "shutdown", "nosave"]
        cache.commands.append(await asyncio.to_thread(_run, shutdown))
        await asyncio.sleep(args.redis_outage)
        cache.commands.append(await asyncio.to_thread(_run, REDIS_START))
        await asyncio.to_thread(_wait_until, ["redis-cli", "-p", "6379", "ping"], 30)
        cache.up_at = now()

    return side


def bucket(status: int) -> str:
    if status == 0:
        return "none"
    if status == 503:
        return "503"
    return f"{status // 100}xx"


def timeline(stats: load.Stats, outages: list[Outage]) -> None:
    print("second  2xx  4xx  503  none  other   backend")
    for second in sorted(stats.timeline):
        counts: Counter[str] = Counter()
        for status, n in stats.timeline[second].items():
            counts[bucket(status)] += n
        other = sum(n for key, n in counts.items() if key not in {"2xx", "4xx", "503", "none"})
        marks = [o.name for o in outages if o.down_at <= second + 1 and second < o.up_at]
        print(
            f"{second:>6}{counts['2xx']:>5}{counts['4xx']:>5}{counts['503']:>5}"
            f"{counts['none']:>6}{other:>7}   {'DOWN: ' + ', '.join(marks) if marks else ''}"
        )


def recovery(stats: load.Stats, outage: Outage) -> str:
    """Seconds from the backend being back to the first whole second with no 503."""
    for second in sorted(stats.timeline):
        if second < outage.up_at:
            continue
        counts = stats.timeline[second]
        if (
            counts.get(503, 0) == 0
            and counts.get(0, 0) == 0
            and any(200 <= s < 300 for s in counts)
        ):
            return f"{max(0.0, second - outage.up_at):.1f} s"
    return "not within the run"


def main() -> int:
    p = load.parser()
    p.description = __doc__.split("\n\n")[0]
    p.set_defaults(players=40, watchers=40, duration=45.0, settle=8.0)
    p.add_argument("--db-at", type=float, default=10.0, help="seconds into the load")
    p.add_argument("--db-outage", type=float, default=3.0, help="seconds PostgreSQL is down")
    p.add_argument("--redis-after", type=float, default=8.0, help="seconds after PostgreSQL")
    p.add_argument("--redis-outage", type=float, default=3.0, help="seconds Redis is down")
    args = p.parse_args()
    if not PG_VERSION:
        raise SystemExit("no /etc/postgresql: this benchmark drives the machine's PostgreSQL")
    outages: list[Outage] = []
    result = load.run(args, side_task=faults(args, outages))
    print("Faults")
    for outage in outages:
        print(
            f"  {outage.name}: down at {outage.down_at:.1f} s, back at {outage.up_at:.1f} s "
            f"({outage.up_at - outage.down_at:.1f} s); answering 2xx again "
            f"{recovery(result.stats, outage)} later"
        )
        for line in outage.commands:
            print(f"    {line}")
    timeline(result.stats, outages)
    total_503 = sum(c.get(503, 0) for c in result.stats.statuses.values())
    print(f"503 answers: {total_503}, all in the error shape: {not result.stats.bad_error_shapes}")
    load.report(result, args)
    failed = result.problems or result.ledger.unresolved or result.stats.bad_error_shapes
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
