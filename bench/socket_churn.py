"""Socket churn from one address: what a bystander's reads cost while another address
opens and closes live-board sockets as fast as it may.

One uvicorn as in production (SQLite, or PostgreSQL with compose's pool), the
day prepared. A bystander (127.0.0.50) reads `/api/daily/` every 100 ms, timed,
for `--seconds` alone, then for `--seconds` while a churner in a process of its
own (127.0.0.60) opens `--rate` live-board sockets a second, each closed once
its first message came. The server's own per-address limit
(SOCKET_CONNECTS_PER_SECOND, SOCKET_CONNECT_BURST) is as set in the
environment, default as in production; `--unlimited` lifts it, to see what it
saves.

    .venv/bin/python bench/socket_churn.py --rate 80 --seconds 15
    .venv/bin/python bench/socket_churn.py --rate 80 --seconds 15 --unlimited
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from multiprocessing.connection import Connection
from pathlib import Path

import httpx
import websockets

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load  # noqa: E402
from abuse import server_env  # noqa: E402
from databases import ensure_database  # noqa: E402

ROOT = load.ROOT
BYSTANDER = "127.0.0.50"
CHURNER = "127.0.0.60"
READ_EVERY = 0.1


def _churn(url: str, rate: float, seconds: float, pipe: Connection) -> None:
    """In a process of its own: open `rate` sockets a second for `seconds`, each closed
    after its first message; send back how each ended (its first message's type, or
    its close code)."""

    async def one(ends: Counter[str]) -> None:
        try:
            async with websockets.connect(
                url, origin=url.split("/ws/")[0].replace("ws://", "http://"),
                local_addr=(CHURNER, 0), open_timeout=10,
            ) as socket:  # fmt: skip
                first = await asyncio.wait_for(socket.recv(), 10)
                ends["refused" if '"type": "error"' in str(first) else "served"] += 1
        except websockets.ConnectionClosed as closed:
            ends[f"closed {closed.rcvd.code if closed.rcvd else None}"] += 1
        except Exception as error:  # noqa: BLE001 (counted, whatever it is)
            ends[type(error).__name__] += 1

    async def run() -> Counter[str]:
        ends: Counter[str] = Counter()
        tasks = []
        started = time.perf_counter()
        sent = 0
        while time.perf_counter() - started < seconds:
            due = started + sent / rate
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
            tasks.append(asyncio.create_task(one(ends)))
            sent += 1
        await asyncio.gather(*tasks)
        return ends

    pipe.recv()
    pipe.send(asyncio.run(run()))


async def _bystander(base: str, seconds: float) -> tuple[list[float], int]:
    transport = httpx.AsyncHTTPTransport(local_address=BYSTANDER)
    times: list[float] = []
    failed = 0
    async with httpx.AsyncClient(timeout=10, transport=transport) as http:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            started = time.perf_counter()
            response = await http.get(f"{base}/api/daily/")
            times.append(time.perf_counter() - started)
            failed += response.status_code != 200
            await asyncio.sleep(READ_EVERY)
    return times, failed


def _summary(times: list[float]) -> str:
    ordered = sorted(times)
    p50 = ordered[len(ordered) // 2] * 1000
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000
    return f"{len(ordered)} reads: p50 {p50:.0f} ms, p99 {p99:.0f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=80.0, help="sockets opened a second")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--database-url", default=None, help="PostgreSQL (emptied)")
    parser.add_argument("--unlimited", action="store_true", help="lift the per-address limit")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="easyharp-churn-") as tmp:
        env = server_env(Path(tmp) / "db.sqlite3", None, args.database_url)
        if args.unlimited:
            env.update(SOCKET_CONNECT_BURST="1000000", SOCKETS_PER_ADDRESS="1000000")
        today = datetime.datetime.now(datetime.UTC).date().isoformat()
        empty = ["flush", "--noinput"] if args.database_url else ["check"]
        if args.database_url:
            ensure_database(args.database_url)
        for command in (["migrate", "--noinput"], empty,
                        ["prepare_daily_deals", "--start", today, "--days", "1"]):  # fmt: skip
            subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env,
                           check=True, capture_output=True, timeout=180)  # fmt: skip
        server = load.Server({**env, "BENCH_SERVER_LOG": f"{tmp}/server.log"})
        server.start()
        try:
            url = f"ws://127.0.0.1:{server.port}/ws/daily/{today}/leaderboard/?order=score"
            ours, theirs = multiprocessing.get_context("spawn").Pipe()
            churner = multiprocessing.get_context("spawn").Process(
                target=_churn, args=(url, args.rate, args.seconds, theirs), daemon=True
            )
            churner.start()
            quiet, quiet_failed = asyncio.run(_bystander(server.base, args.seconds))
            ours.send("go")
            during, during_failed = asyncio.run(_bystander(server.base, args.seconds))
            ends = ours.recv()
            churner.join(timeout=30)
        finally:
            server.stop()
    limit = "lifted" if args.unlimited else (
        f"{os.environ.get('SOCKET_CONNECTS_PER_SECOND', '10')}/s, "
        f"burst {os.environ.get('SOCKET_CONNECT_BURST', '60')}"
    )  # fmt: skip
    print(f"per-address socket limit: {limit}; load average {os.getloadavg()[0]:.1f}")
    print(f"bystander alone:       {_summary(quiet)}, {quiet_failed} failed")
    print(f"bystander during churn: {_summary(during)}, {during_failed} failed")
    print(f"churner ({args.rate:.0f} sockets a second): {dict(sorted(ends.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
