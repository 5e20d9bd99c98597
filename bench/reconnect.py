"""Socket connects: the server's CPU to open a socket, per route, and a reconnect storm.

Starts one uvicorn process as in production (bench/server.py) on a loopback
port with PostgreSQL and the Redis channel layer (the per-address socket
limits lifted, as bench/load.py does: every client is on loopback). For each
route (the anonymous day's board, a signed-in player's friends board, a
ranked attempt, watching a player's attempt, a race) it opens `--sockets`
sockets at once and reports the server process's CPU per connect (from
/proc, until every socket has its first message) and the wall time until
every socket has its first message; then closes them.

With `--storm N` it opens N anonymous board sockets at once instead, as a
restart sends every socket back, while `--players` players already
connected (in a process of their own) stream actions of their ranked
attempts at one a second each: the time until every storm socket has its
first message, and the players' send-to-acknowledgement p50 and p99 while
the storm lasts.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/easyharp_reconnect \\
    REDIS_URL=redis://127.0.0.1:6379/3 \\
    .venv/bin/python bench/reconnect.py --sockets 300
    .venv/bin/python bench/reconnect.py --storm 10000 --players 50

The database is created if missing and migrated; each run makes new players.
Everything listens and connects on loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import uvloop  # noqa: E402

from bench.databases import ensure_database  # noqa: E402
from bench.fanout import (  # noqa: E402
    cpu_seconds,
    free_port,
    loopback_url,
    percentile,
    process_tree,
    server_env,
    setup_django,
    wait_for_port,
)
from bench.server import uvicorn_command  # noqa: E402
from bench.stream import legal_logs, signed_in_cookie, socket_to  # noqa: E402

ROUTES = ("board", "friends", "attempt", "watch", "race")


def prepare(args: argparse.Namespace, count: int) -> dict[str, Any]:
    """Migrate, open today's deal, and make `count` players of each kind: cookies of
    players whose ranked attempt is open (`playing`, with a legal game each in
    `logs`), of players who have played the day (`played`), and of racers in
    races of eight (`racers`, with their race's code)."""
    setup_django(args.database_url, args.redis_url)
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.utils import timezone

    from games.models import DailyDeal
    from games.rules import Deal
    from games.services import attempt_start, daily_deal_store
    from races.models import RACERS_MAX
    from races.services import race_create, race_join
    from ranking.actions import game_submit

    call_command("migrate", verbosity=0)
    today = timezone.now().date()
    day = DailyDeal.objects.filter(date=today).first() or daily_deal_store(date=today)
    deal = Deal(day.number).code
    run_id = f"{time.time_ns():x}"
    users = get_user_model()

    def make(prefix: str, how_many: int) -> list[Any]:
        names = [f"{prefix}{run_id}-{n}" for n in range(how_many)]
        users.objects.bulk_create([users(username=name, password="!") for name in names])
        return list(users.objects.filter(username__in=names).order_by("pk"))

    playing = make("rc", count)
    for player in playing:
        attempt_start(player=player, date=today)
    played = make("rv", count if args.storm is None else 0)
    for viewer in played:
        attempt_start(player=viewer, date=today)
        game_submit(player=viewer, deal=deal, log="S")
    racers: list[tuple[str, str]] = []
    seated = make("rr", count if args.storm is None else 0)
    for start in range(0, len(seated), RACERS_MAX):
        table = seated[start : start + RACERS_MAX]
        race = race_create(host=table[0], minutes=30)
        for player in table[1:]:
            race_join(player=player, code=race.code)
        racers += [(signed_in_cookie(player), race.code) for player in table]
    logs = legal_logs(deal, 20, 200, args.seed)
    return {
        "date": today.isoformat(),
        "playing": [(signed_in_cookie(p), p.username) for p in playing],
        "logs": [random.Random(n).choice(logs) for n in range(count)],
        "played": [signed_in_cookie(viewer) for viewer in played],
        "racers": racers,
    }


def route_sockets(route: str, port: int, made: dict[str, Any]) -> list[tuple[str, str]]:
    """(URL, cookie) of each socket of `route`."""
    base = f"ws://127.0.0.1:{port}/ws"
    date = made["date"]
    board = f"{base}/daily/{date}/leaderboard/?order=score"
    if route == "board":
        return [(board, "") for _ in made["playing"]]
    if route == "friends":
        return [(f"{board}&scope=friends", cookie) for cookie in made["played"]]
    if route == "attempt":
        return [(f"{base}/daily/{date}/attempt/", cookie) for cookie, _ in made["playing"]]
    if route == "watch":
        return [
            (f"{base}/daily/{date}/players/{name}/attempt/", viewer)
            for viewer, (_, name) in zip(made["played"], made["playing"], strict=True)
        ]
    return [(f"{base}/races/{code}/", cookie) for cookie, code in made["racers"]]


async def open_all(
    port: int, sockets: list[tuple[str, str]], cpu_of: Any
) -> tuple[float, float, list[Any], list[str]]:
    """Open every socket at once: (wall seconds until each has its first message, server
    CPU seconds meanwhile, the open sockets, errors)."""
    origin = f"http://127.0.0.1:{port}"
    errors: list[str] = []

    async def one(url: str, cookie: str) -> Any:
        try:
            websocket = await socket_to(url, origin, cookie)
            first = json.loads(await websocket.recv())
            if first.get("type") == "error":
                errors.append(str(first))
            return websocket
        except Exception as error:  # counted, whatever it is
            errors.append(repr(error))
            return None

    cpu_before = cpu_of()
    started = time.monotonic()
    opened = await asyncio.gather(*(one(url, cookie) for url, cookie in sockets))
    wall = time.monotonic() - started
    cpu = cpu_of() - cpu_before
    return wall, cpu, [socket for socket in opened if socket is not None], errors


async def close_all(sockets: list[Any]) -> None:
    await asyncio.gather(*(socket.close() for socket in sockets), return_exceptions=True)


def measure_routes(args: argparse.Namespace, port: int, made: dict[str, Any], cpu_of: Any) -> None:
    async def run() -> None:
        for route in args.routes:
            sockets = route_sockets(route, port, made)
            await asyncio.sleep(1)  # the last route's closes are done
            wall, cpu, opened, errors = await open_all(port, sockets, cpu_of)
            print(
                json.dumps(
                    {
                        "route": route,
                        "sockets": len(sockets),
                        "opened": len(opened),
                        "server_cpu_ms_per_connect": round(cpu / len(sockets) * 1000, 2),
                        "seconds_until_every_first_message": round(wall, 2),
                        "errors": errors[:3],
                    }
                ),
                flush=True,
            )
            await close_all(opened)

    uvloop.run(run())


def stream_players(
    port: int, players: list[tuple[str, list[str]]], date: str, ready: Any, stop: Any, out: Any
) -> None:
    """In a process of its own: connect the players, then send one action a second each
    until `stop`; put the send-to-acknowledgement latencies from after `ready` was
    answered."""
    latencies: list[float] = []
    errors: list[str] = []

    async def player(cookie: str, log: list[str], connected: asyncio.Event) -> None:
        url = f"ws://127.0.0.1:{port}/ws/daily/{date}/attempt/"
        sent: dict[int, float] = {}
        try:
            async with socket_to(url, f"http://127.0.0.1:{port}", cookie) as websocket:
                await websocket.recv()
                connected.set()

                async def receive() -> None:
                    async for text in websocket:
                        message = json.loads(text)
                        if message["type"] == "ack":
                            for n in [n for n in sent if n <= message["n"]]:
                                latencies.append(time.monotonic() - sent.pop(n))

                receiver = asyncio.create_task(receive())
                rng = random.Random(cookie)
                await asyncio.sleep(rng.random())
                for number, token in enumerate(log, start=1):
                    if stop.is_set():
                        break
                    sent[number] = time.monotonic()
                    await websocket.send(
                        json.dumps({"type": "action", "n": number, "action": token})
                    )
                    await asyncio.sleep(rng.uniform(0.5, 1.5))
                await asyncio.sleep(2)
                receiver.cancel()
        except Exception as error:  # reported, never hidden
            errors.append(repr(error))
            connected.set()

    async def run() -> None:
        events = [asyncio.Event() for _ in players]
        tasks = [
            asyncio.create_task(player(cookie, log, event))
            for (cookie, log), event in zip(players, events, strict=True)
        ]
        await asyncio.gather(*(event.wait() for event in events))
        ready.set()
        await asyncio.gather(*tasks)

    uvloop.run(run())
    out.put({"latencies": latencies, "errors": errors[:3]})


def measure_storm(args: argparse.Namespace, port: int, made: dict[str, Any], cpu_of: Any) -> None:
    context = multiprocessing.get_context("spawn")
    ready, stop, out = context.Event(), context.Event(), context.Queue()
    players = [
        (cookie, log) for (cookie, _), log in zip(made["playing"], made["logs"], strict=True)
    ]
    streamer = context.Process(
        target=stream_players, args=(port, players, made["date"], ready, stop, out)
    )
    streamer.start()
    ready.wait(120)
    time.sleep(3)  # the players' steady pace
    url = f"ws://127.0.0.1:{port}/ws/daily/{made['date']}/leaderboard/?order=score"

    async def run() -> tuple[float, float, int, list[str]]:
        wall, cpu, opened, errors = await open_all(port, [(url, "")] * args.storm, cpu_of)
        stop.set()
        await close_all(opened)
        return wall, cpu, len(opened), errors

    wall, cpu, opened, errors = uvloop.run(run())
    result = out.get(timeout=120)
    streamer.join(30)
    latencies = sorted(result["latencies"])
    print(
        json.dumps(
            {
                "storm_sockets": args.storm,
                "opened": opened,
                "seconds_until_every_first_message": round(wall, 1),
                "server_cpu_ms_per_connect": round(cpu / args.storm * 1000, 2),
                "players_streaming": len(players),
                "acks_during_storm": len(latencies),
                "ack_p50_ms": round(percentile(latencies, 0.5) * 1000, 1) if latencies else None,
                "ack_p99_ms": round(percentile(latencies, 0.99) * 1000, 1) if latencies else None,
                "errors": (errors + result["errors"])[:3],
            },
            indent=2,
        )
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sockets", type=int, default=300, help="sockets a route")
    parser.add_argument("--routes", nargs="+", choices=ROUTES, default=list(ROUTES))
    parser.add_argument("--storm", type=int, default=None, help="board sockets opened at once")
    parser.add_argument("--players", type=int, default=50, help="players streaming in a storm")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    args.database_url = loopback_url(
        os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/easyharp_reconnect"),
        "DATABASE_URL",
    )
    args.redis_url = loopback_url(
        os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/3"), "REDIS_URL"
    )
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    ensure_database(args.database_url)
    count = args.players if args.storm is not None else args.sockets
    print(f"preparing {count} players of each kind...", flush=True)
    made = prepare(args, count)
    port = free_port()
    env = {**os.environ, **server_env(args.database_url, args.redis_url)}
    server = subprocess.Popen(uvicorn_command(port), cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    try:
        asyncio.run(wait_for_port(port, server, 60))
        tree = process_tree(server.pid)

        def cpu_of() -> float:
            return sum(cpu_seconds(pid) for pid in tree)

        print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
        if args.storm is None:
            measure_routes(args, port, made, cpu_of)
        else:
            measure_storm(args, port, made, cpu_of)
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
