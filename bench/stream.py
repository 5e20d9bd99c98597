"""Streamed ranked attempts: accepted actions a second per web process, its CPU per
action, and the time from sending an action to its acknowledgement (stored).

Starts one uvicorn process as in production (bench/server.py) on a loopback
port with PostgreSQL and the Redis channel layer, signs in N players whose
ranked attempt of today is open, and has each of them stream the actions of
a legal game over `ws/daily/<date>/attempt/` at a person's pace (`--rate`
actions a second each, jittered), without waiting for the answers, from
`--client-procs` processes; `--watchers` more players (who have played the
day) each watch one of them live and count the actions they are sent.
Play starts once every socket is connected (within `--ramp` seconds), and
over the `--duration` seconds of steady play that follow it measures the
acknowledgements received (each one a stored action), the server's CPU, and
the latency from each send to its acknowledgement (p50, p99, max); then it
checks that the database holds every acknowledged action.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/easyharp_stream \\
    REDIS_URL=redis://127.0.0.1:6379/3 \\
    .venv/bin/python bench/stream.py --players 1000 --rate 1 --duration 30

The database is created if missing and migrated; each run makes new players.
Everything listens and connects on loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import multiprocessing
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
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

LOG_POOL = 50
# Seconds between the last socket's connection and the steady part: the server
# finishes what the connections started.
SETTLE_SECONDS = 2.0


def legal_logs(deal: str, count: int, length: int, seed: int) -> list[list[str]]:
    """`count` legal games of up to `length` actions (half of them stock taps)."""
    from games.rules import Game

    rng = random.Random(seed)
    logs = []
    for _ in range(count):
        play = Game(deal)
        for _ in range(length):
            actions = [action for action in play.legal_actions() if action != "U"]
            if not actions:
                break
            play.play("S" if "S" in actions and rng.random() < 0.5 else rng.choice(actions))
        logs.append(play.log)
    return logs


def signed_in_cookie(player: Any) -> str:
    """A new session of `player`, as the cookie a browser would send."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY

    session = import_module(settings.SESSION_ENGINE).SessionStore()
    session[SESSION_KEY] = str(player.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = player.get_session_auth_hash()
    session.create()
    return f"{settings.SESSION_COOKIE_NAME}={session.session_key}"


def socket_to(url: str, origin: str, cookie: str) -> Any:
    """The client socket of a player or a watcher (as bench/fanout.py opens its own)."""
    from websockets.asyncio.client import connect

    return connect(
        url,
        origin=origin,  # type: ignore[arg-type]
        compression=None,
        ping_interval=None,
        open_timeout=120,
        additional_headers=[("Cookie", cookie)],
    )


def prepare(
    args: argparse.Namespace,
) -> tuple[str, str, list[tuple[str, list[str]]], dict[str, str]]:
    """Migrate, open today's deal, and make the players: (date, run id, [(cookie, log)],
    {cookie: username})."""
    setup_django(args.database_url, args.redis_url)
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.utils import timezone

    from games.models import DailyDeal
    from games.rules import Deal
    from games.services import attempt_start, daily_deal_store

    call_command("migrate", verbosity=0)
    today = timezone.now().date()
    day = DailyDeal.objects.filter(date=today).first() or daily_deal_store(date=today)
    deal = Deal(day.number).code
    logs = legal_logs(deal, LOG_POOL, int(args.rate * args.duration * 2) + 20, args.seed)
    run_id = f"{time.time_ns():x}"
    users = get_user_model()
    usernames = [f"stream{run_id}-{n}" for n in range(args.players)]
    users.objects.bulk_create([users(username=name, password="!") for name in usernames])
    rng = random.Random(args.seed)
    players = []
    names = {}
    for player in users.objects.filter(username__in=usernames).order_by("pk"):
        attempt_start(player=player, date=today)
        cookie = signed_in_cookie(player)
        players.append((cookie, rng.choice(logs)))
        names[cookie] = player.username
    return today.isoformat(), run_id, players, names


def prepare_watchers(args: argparse.Namespace, run_id: str, deal: str) -> list[str]:
    """`--watchers` players who have played the day (so they may watch): their cookies."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from games.services import attempt_start
    from ranking.actions import game_submit

    users = get_user_model()
    usernames = [f"watch{run_id}-{n}" for n in range(args.watchers)]
    users.objects.bulk_create([users(username=name, password="!") for name in usernames])
    cookies = []
    for viewer in users.objects.filter(username__in=usernames).order_by("pk"):
        attempt_start(player=viewer, date=timezone.now().date())
        game_submit(player=viewer, deal=deal, log="S")
        cookies.append(signed_in_cookie(viewer))
    return cookies


# --- The players' process ----------------------------------------------------------


class Clock:
    """The steady part's start and stop (`time.monotonic()`, the same in every process),
    shared by the run and its client processes: the run sets the start once every
    socket is connected (`connected`), or its ramp is over."""

    def __init__(self, duration: float) -> None:
        self.duration = duration
        self.connected = multiprocessing.Value(ctypes.c_int, 0)
        self._start = multiprocessing.Value(ctypes.c_double, 0.0)
        self._started: asyncio.Event | None = None

    def arrived(self) -> None:
        """A socket of this process is connected."""
        with self.connected.get_lock():
            self.connected.value += 1

    def start(self, at: float) -> None:
        self._start.value = at

    async def started(self) -> tuple[float, float]:
        """Once the run has set the start: the start and the stop. (One task of the
        process looks for it, however many sockets wait.)"""
        if self._started is None:
            self._started = asyncio.Event()
            asyncio.create_task(self._look_for_start(self._started))
        await self._started.wait()
        return self._start.value, self._start.value + self.duration

    async def _look_for_start(self, started: asyncio.Event) -> None:
        while not self._start.value:
            await asyncio.sleep(0.05)
        started.set()


async def play(
    url: str,
    origin: str,
    cookie: str,
    log: list[str],
    rate: float,
    clock: Clock,
    results: dict[str, Any],
    welcome: str = "state",
) -> None:
    """One player: connect (the server's first message is of type `welcome`), then, from
    the clock's start, send the game's actions at `rate` a second until its stop.
    Messages other than acknowledgements are counted by type in
    `results["received"]`."""
    sent: dict[int, float] = {}
    rng = random.Random(cookie)
    try:
        async with socket_to(url, origin, cookie) as websocket:
            state = json.loads(await websocket.recv())
            assert state["type"] == welcome, state
            results["connected"] += 1
            clock.arrived()
            start_at, stop_at = await clock.started()

            async def receive() -> None:
                async for text in websocket:
                    now = time.monotonic()
                    message = json.loads(text)
                    kind = message["type"]
                    if kind != "ack":
                        results["received"][kind] = results["received"].get(kind, 0) + 1
                        if kind not in {"watchers", "race"}:
                            results["other"].append(message)
                        continue
                    number = message["n"]
                    for acked in [n for n in sent if n <= number]:
                        if start_at <= sent[acked] < stop_at:
                            results["latencies"].append(now - sent[acked])
                            results["acked"] += 1
                        del sent[acked]
                    results["stored"][cookie] = number

            receiver = asyncio.create_task(receive())
            await asyncio.sleep(max(0.0, start_at - time.monotonic()) + rng.random() / rate)
            for number, token in enumerate(log, start=1):
                now = time.monotonic()
                if now >= stop_at:
                    break
                sent[number] = now
                await websocket.send(json.dumps({"type": "action", "n": number, "action": token}))
                results["sent"] += 1
                await asyncio.sleep(rng.uniform(0.5, 1.5) / rate)
            # Let the last acknowledgements come.
            await asyncio.sleep(2)
            receiver.cancel()
    except Exception as error:  # reported, never hidden
        results["errors"].append(repr(error))


async def watch(url: str, origin: str, cookie: str, clock: Clock, results: dict[str, Any]) -> None:
    """One watcher: hold the socket and count the actions it is told of until the clock's
    stop (as `actions`, or as `progress` while the game is open)."""
    try:
        async with socket_to(url, origin, cookie) as websocket:
            snapshot = json.loads(await websocket.recv())
            assert snapshot["type"] == "snapshot", snapshot
            have = snapshot["actions"]
            results["watching"] += 1
            clock.arrived()
            _, stop_at = await clock.started()
            while True:
                left = stop_at + 2 - time.monotonic()
                if left <= 0:
                    break
                try:
                    text = await asyncio.wait_for(websocket.recv(), left)
                except TimeoutError:
                    break
                message = json.loads(text)
                if message["type"] == "actions":
                    results["watched_actions"] += len(message["actions"])
                    have += len(message["actions"])
                elif message["type"] == "progress":
                    results["watched_actions"] += message["actions"] - have
                    have = message["actions"]
                elif message["type"] == "snapshot":
                    have = message["actions"]
    except Exception as error:  # reported, never hidden
        results["errors"].append(repr(error))


def run_players(
    origin: str,
    players: list[tuple[str, list[str], str]],
    rate: float,
    clock: Clock,
    out: Any,
    watchers: list[tuple[str, str]] = (),  # type: ignore[assignment]
    welcome: str = "state",
) -> None:
    os.nice(5)  # the load generator yields the CPU to the server under test
    results: dict[str, Any] = {
        "connected": 0,
        "sent": 0,
        "acked": 0,
        "latencies": [],
        "other": [],
        "errors": [],
        "stored": {},
        "watching": 0,
        "watched_actions": 0,
        "received": {},
    }

    async def main() -> None:
        await asyncio.gather(
            *(
                play(url, origin, cookie, log, rate, clock, results, welcome)
                for cookie, log, url in players
            ),
            *(watch(where, origin, cookie, clock, results) for where, cookie in watchers),
        )

    uvloop.run(main())
    results["other"] = results["other"][:5]
    results["errors"] = results["errors"][:5]
    out.put(results)


# --- The run -----------------------------------------------------------------------


def streaming_arguments(parser: argparse.ArgumentParser) -> argparse.Namespace:
    """The arguments of a streaming run, parsed; its services (loopback only, from
    DATABASE_URL and REDIS_URL) in `database_url` and `redis_url`, the database made
    if missing."""
    parser.add_argument("--rate", type=float, default=1.0, help="actions a second per player")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of steady play")
    parser.add_argument(
        "--ramp",
        type=float,
        default=10.0,
        help="seconds at most to connect everyone (play starts once all are)",
    )
    parser.add_argument("--client-procs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.duration + args.ramp > 60:
        sys.exit("keep a run to a minute: --duration + --ramp <= 60")
    args.database_url = loopback_url(
        os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/easyharp_stream"),
        "DATABASE_URL",
    )
    args.redis_url = loopback_url(
        os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/3"), "REDIS_URL"
    )
    ensure_database(args.database_url)
    return args


def serve_and_stream(
    args: argparse.Namespace,
    players_at: Callable[[int], list[tuple[str, list[str], str]]],
    *,
    watchers_at: Callable[[int], list[tuple[str, str]]] = lambda port: [],
    welcome: str = "state",
    start_when_connected: bool = True,
) -> tuple[list[dict[str, Any]], float, float]:
    """Start the server on a free port, have the players (`players_at(port)`: cookie,
    log, socket URL) and watchers connect from `--client-procs` processes, then play
    and watch for `--duration` seconds; the processes' results, the server's CPU
    seconds over that steady part, and the seconds everyone took to connect.

    The steady part starts SETTLE_SECONDS after every socket is connected, or at
    the end of the `--ramp` if some are not (or at its end in any case, without
    `start_when_connected`: a race's start is set before it)."""
    port = free_port()
    env = {**os.environ, **server_env(args.database_url, args.redis_url)}
    server = subprocess.Popen(uvicorn_command(port), cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    try:
        asyncio.run(wait_for_port(port, server, 60))
        players, watchers = players_at(port), watchers_at(port)
        origin = f"http://127.0.0.1:{port}"
        clock = Clock(args.duration)
        out: multiprocessing.Queue[dict[str, Any]] = multiprocessing.Queue()
        procs = [
            multiprocessing.Process(
                target=run_players,
                args=(origin, players[n :: args.client_procs], args.rate, clock),
                kwargs={
                    "out": out,
                    "watchers": watchers[n :: args.client_procs],
                    "welcome": welcome,
                },
            )
            for n in range(args.client_procs)
        ]
        began = time.monotonic()
        ramp_end = began + args.ramp
        for proc in procs:
            proc.start()
        sockets = len(players) + len(watchers)
        while time.monotonic() < ramp_end and clock.connected.value < sockets:
            time.sleep(0.1)
        connect_seconds = time.monotonic() - began
        start_at = (
            min(time.monotonic() + SETTLE_SECONDS, ramp_end) if start_when_connected else ramp_end
        )
        clock.start(start_at)
        time.sleep(max(0.0, start_at - time.monotonic()))
        tree = process_tree(server.pid)
        cpu_before = sum(cpu_seconds(pid) for pid in tree)
        time.sleep(max(0.0, start_at + args.duration - time.monotonic()))
        cpu = sum(cpu_seconds(pid) for pid in tree) - cpu_before
        results = [out.get(timeout=120) for _ in procs]
        for proc in procs:
            proc.join()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return results, cpu, connect_seconds


def streamed_figures(results: list[dict[str, Any]], cpu: float, duration: float) -> dict[str, Any]:
    """What the players' processes counted, with the server's CPU, as the run's figures."""
    latencies = sorted(latency for result in results for latency in result["latencies"])
    acked = sum(result["acked"] for result in results)
    return {
        "connected": sum(result["connected"] for result in results),
        "sent": sum(result["sent"] for result in results),
        "acked_in_window": acked,
        "actions_per_second": round(acked / duration, 1),
        "server_cpu_share": round(cpu / duration, 2),
        "server_cpu_us_per_action": round(cpu / acked * 1e6) if acked else None,
        "p50_ms": round(percentile(latencies, 0.5) * 1000, 1) if latencies else None,
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 1) if latencies else None,
        "max_ms": round(latencies[-1] * 1000, 1) if latencies else None,
        "errors": [error for result in results for error in result["errors"]][:5],
        "other_messages": [m for result in results for m in result["other"]][:5],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument(
        "--watchers", type=int, default=0, help="players watching the players' attempts live"
    )
    args = streaming_arguments(parser)
    print(f"preparing {args.players} players...", flush=True)
    date, run_id, players, names = prepare(args)
    from games.models import DailyDeal
    from games.rules import Deal

    deal = Deal(DailyDeal.objects.get(date=date).number).code
    if args.watchers:
        print(f"preparing {args.watchers} watchers...", flush=True)
    watcher_cookies = prepare_watchers(args, run_id, deal) if args.watchers else []

    def watchers_at(port: int) -> list[tuple[str, str]]:
        # Watcher k watches player k (modulo the players).
        return [
            (
                f"ws://127.0.0.1:{port}/ws/daily/{date}/players/"
                f"{names[players[k % len(players)][0]]}/attempt/",
                cookie,
            )
            for k, cookie in enumerate(watcher_cookies)
        ]

    results, cpu, connect_seconds = serve_and_stream(
        args,
        lambda port: [
            (cookie, log, f"ws://127.0.0.1:{port}/ws/daily/{date}/attempt/")
            for cookie, log in players
        ],
        watchers_at=watchers_at,
    )
    acked_last = {cookie: n for result in results for cookie, n in result["stored"].items()}
    from games.models import Attempt

    stored = dict(
        Attempt.objects.filter(player__username__startswith=f"stream{run_id}-").values_list(
            "player__username", "log"
        )
    )
    # Every acknowledged action is in the database (acknowledgements are cumulative).
    lost = sum(
        1 for cookie, name in names.items() if len(stored[name].split()) < acked_last.get(cookie, 0)
    )
    print(
        json.dumps(
            {
                "players": args.players,
                "rate_per_player": args.rate,
                "watchers": args.watchers,
                "watching": sum(result["watching"] for result in results),
                "seconds_to_connect_everyone": round(connect_seconds, 1),
                "actions_sent_to_watchers": sum(result["watched_actions"] for result in results),
                **streamed_figures(results, cpu, args.duration),
                "attempts_with_an_acknowledged_action_lost": lost,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
