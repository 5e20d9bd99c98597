"""Fan-out benchmark of the live leaderboards: commit-to-socket latency and convergence.

Runs real servers (uvicorn as in production, or daphne, the old path; `--compare`
runs several in turn and prints them side by side) on loopback ports with the
Redis channel layer and PostgreSQL, opens N websocket clients on today's score
board (spread over the servers, held by `--client-procs` processes), and streams
game submissions through the real service
(`game_submit`, in a separate process, each one the ranked game of a new
player whose attempt was started beforehand, so that every commit adds one to
the board's player count). Then it prints the delivery
latency, from each commit to each client seeing a board that includes it
(p50, p90, p99, max), and checks that every client's final board equals a
fresh snapshot. With `--signed-in N`, the first N clients sign in as players
who have a game on the board: they also keep their own entry (`me`), which
must end equal to a fresh read of it.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/easyharp_fanout \\
    REDIS_URL=redis://127.0.0.1:6379/2 \\
    .venv/bin/python bench/fanout.py --clients 2000 --rate 50 --duration 20 --compare

The database is created if missing and migrated; players of each run get new
names, so runs can be repeated. Everything listens and connects on loopback
only. The whole run is bounded by --timeout seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import datetime
import json
import os
import random
import resource
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.databases import ensure_database  # noqa: E402
from bench.server import APP, MAX_MESSAGE, uvicorn_command  # noqa: E402

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
# Logs drawn at random for the submissions: varied scores, most below the top.
LOG_POOL = 300


def loopback_url(url: str, what: str) -> str:
    host = urlsplit(url).hostname or ""
    if host not in LOOPBACK:
        sys.exit(f"{what} must point at a loopback address, not {host!r}")
    return url


def setup_django(database_url: str, redis_url: str) -> None:
    os.environ.update(server_env(database_url, redis_url))
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def server_env(database_url: str, redis_url: str) -> dict[str, str]:
    """The environment of every process of the run (servers and submitter)."""
    return {
        "DJANGO_SETTINGS_MODULE": "easyharp_site.settings",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "DEBUG": "false",
        "SECRET_KEY": "fanout-benchmark-only",
        "DAILY_DEAL_SALT": "fanout-benchmark-only",
        "SECURE_SSL_REDIRECT": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        # One connection per process, kept: the consumers' reads share it.
        "DATABASE_CONN_MAX_AGE": "600",
        # The simulated players all come from loopback: none is held to one address's share.
        "REQUEST_CONCURRENCY_PER_ADDRESS": "100000",
        "SOCKETS_PER_ADDRESS": "1000000",
        "SOCKET_CONNECTS_PER_SECOND": "1000000",
        "SOCKET_CONNECT_BURST": "1000000",
        "LOG_LEVEL": "WARNING",
    }


def random_logs(deal: str, count: int, seed: int) -> list[list[str]]:
    from games.rules import Game

    rng = random.Random(seed)
    logs = []
    for _ in range(count):
        play = Game(deal)
        for _ in range(rng.randint(1, 120)):
            actions = [action for action in play.legal_actions() if action != "U"]
            if not actions:
                break
            play.play(rng.choice(actions))
        logs.append(play.log)
    return logs


# --- The submitter process -------------------------------------------------------


def attempt_started_an_hour_ago(player: Any) -> None:
    """Start the player's ranked attempt of today an hour back, so that their game is
    played at a person's pace (a faster one is held off the boards for review)."""
    from django.utils import timezone

    from games.models import Attempt
    from games.services import attempt_start

    attempt, _ = attempt_start(player=player, date=timezone.now().date())
    Attempt.objects.filter(pk=attempt.pk).update(
        started_at=timezone.now() - datetime.timedelta(hours=1)
    )


def run_submitter(args: argparse.Namespace) -> None:
    """Submit `rate` games a second for `duration` seconds; print the commit times as JSON."""
    # The load generator yields the CPU to the servers under test (--nice).
    os.nice(args.nice)
    setup_django(args.database_url, args.redis_url)
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from ranking.actions import game_submit

    names = json.loads(Path(args.players_file).read_text())
    deal = args.deal
    logs = random_logs(deal, LOG_POOL, seed=args.seed)
    players = {user.username: user for user in get_user_model().objects.filter(username__in=names)}
    # Each player's day's attempt is started before the clock: their game is ranked.
    for user in players.values():
        attempt_started_an_hour_ago(user)
    rng = random.Random(args.seed)
    commits: list[float] = []

    for index, name in enumerate(names):
        delay = args.start_at + index / args.rate - time.time()
        if delay > 0:
            time.sleep(delay)
        with transaction.atomic():
            # Registered first, so it runs first after COMMIT, before the service's hook.
            transaction.on_commit(lambda: commits.append(time.time()))
            game_submit(player=players[name], deal=deal, log=rng.choice(logs))
    print(json.dumps({"commits": commits, "cpu": time.process_time()}))


# --- The clients ------------------------------------------------------------------


@dataclass
class Client:
    url: str
    origin: str
    # A signed-in client sends its session cookie and also keeps `me`.
    cookie: str | None = None
    player_id: int | None = None
    board: dict[str, Any] = field(default_factory=dict)
    version: int = 0
    base_total: int = 0
    # (time received, total) of every update.
    seen_at: list[float] = field(default_factory=list)
    totals: list[int] = field(default_factory=list)
    messages: int = 0
    received_bytes: int = 0
    out_of_order: int = 0
    errors: list[str] = field(default_factory=list)


SHOWN = ("total", "entries", "me")  # what a client shows: a snapshot or an update replaces


async def watch(client: Client, origin: str, ready: asyncio.Event, stop: asyncio.Event) -> None:
    """Hold one socket: take the snapshot, then apply every update until `stop`."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    try:
        headers = [("Cookie", client.cookie)] if client.cookie else None
        async with connect(
            client.url,
            origin=origin,
            compression=None,
            ping_interval=None,
            open_timeout=120,
            additional_headers=headers,
        ) as websocket:
            snapshot = json.loads(await websocket.recv())
            client.board = {key: snapshot[key] for key in SHOWN if key in snapshot}
            client.version = snapshot["version"]
            client.base_total = snapshot["total"]
            ready.set()
            # Closed from outside when the run ends: no polling timers per socket.
            closer = asyncio.create_task(close_on(stop, websocket))
            try:
                async for text in websocket:
                    now = time.time()
                    update = json.loads(text)
                    client.messages += 1
                    client.received_bytes += len(text)
                    if update["version"] <= client.version:
                        client.out_of_order += 1
                        continue
                    client.version = update["version"]
                    for key in SHOWN:
                        if key in update:
                            client.board[key] = update[key]
                    client.seen_at.append(now)
                    client.totals.append(update["total"])
                # Closed before the run ended: the socket missed the rest of the stream.
                if not stop.is_set():
                    client.errors.append(f"closed early: code {websocket.close_code}")
            except ConnectionClosed as closed:
                if not stop.is_set():
                    client.errors.append(f"closed early: {closed!r}")
            finally:
                closer.cancel()
    except Exception as error:  # reported, never hidden
        client.errors.append(repr(error))
        ready.set()


async def close_on(stop: asyncio.Event, websocket: Any) -> None:
    await stop.wait()
    await websocket.close()


def own_entries(day: Day) -> dict[int, Any]:
    """Each signed-in watcher's own entry as a fresh read shows it."""
    from leaderboards.selectors import leaderboard_entries_of

    ids = [player_id for _, player_id in day.watchers]
    return leaderboard_entries_of(
        date=datetime.date.fromisoformat(day.date), order="score", player_ids=ids
    )


async def fresh_snapshot(url: str, origin: str) -> dict[str, Any]:
    from websockets.asyncio.client import connect

    async with connect(url, origin=origin, compression=None, open_timeout=30) as websocket:
        snapshot = json.loads(await websocket.recv())
    return {"total": snapshot["total"], "entries": snapshot["entries"]}


# --- The floor: the system call alone ----------------------------------------------


def run_sink(args: argparse.Namespace) -> None:
    """Accept connections on a loopback port and throw away what they send (--role sink)."""

    async def sink() -> None:
        async def drain(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while await reader.read(1 << 16):
                pass
            writer.close()

        server = await asyncio.start_server(drain, "127.0.0.1", args.sink_port)
        print("listening", flush=True)
        async with server:
            await asyncio.to_thread(sys.stdin.readline)

    asyncio.run(sink())


def send_floor(clients: int, size: int, rounds: int = 20) -> float:
    """CPU seconds of one `send` of `size` bytes to one of `clients` loopback TCP sockets.

    What a fan-out cannot go below in this language: the frame is ready, and
    each socket gets one system call (on loopback it also carries the
    receiving side's TCP work, as the servers' writes do). A separate process
    reads and discards.
    """
    port = free_port()
    sink = subprocess.Popen(
        [sys.executable, __file__, "--role", "sink", "--sink-port", str(port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert sink.stdout is not None and sink.stdin is not None
    try:
        sink.stdout.readline()
        sockets = [socket.create_connection(("127.0.0.1", port)) for _ in range(clients)]
        frame = b"x" * size
        started = time.process_time()
        for _ in range(rounds):
            for sock in sockets:
                sock.send(frame)
            time.sleep(0.05)  # the reader catches up: no buffer fills
        spent = time.process_time() - started
        for sock in sockets:
            sock.close()
        return spent / (rounds * clients)
    finally:
        sink.stdin.close()
        sink.wait(10)


# --- The client processes ---------------------------------------------------------
#
# Clients run in `--client-procs` processes of their own (`--role clients`), so
# that thousands of them do not share one core's event loop. Each reads its
# share from a JSON file and talks to the main process in lines on stdin/stdout:
# it prints `connected` once its sockets hold their snapshots, waits for every
# socket to show a total when told `settle TOTAL SECONDS`, and on `stop` closes
# them and prints every client's record.


async def run_clients(args: argparse.Namespace) -> None:
    os.nice(args.nice)
    specs = json.loads(Path(args.clients_file).read_text())
    clients = [Client(**spec) for spec in specs]
    stop = asyncio.Event()
    tasks: list[asyncio.Task[None]] = []
    connecting = asyncio.Semaphore(100)

    async def open_one(client: Client) -> None:
        ready = asyncio.Event()
        async with connecting:
            tasks.append(asyncio.create_task(watch(client, client.origin, ready, stop)))
            await ready.wait()

    await asyncio.gather(*(open_one(client) for client in clients))
    print(json.dumps({"connected": sum(not c.errors for c in clients)}), flush=True)
    while True:
        line = (await asyncio.to_thread(sys.stdin.readline)).split()
        if not line or line[0] == "stop":
            break
        if line[0] == "settle":
            total, deadline = int(line[1]), time.monotonic() + float(line[2])
            while time.monotonic() < deadline and any(
                c.board.get("total", -1) < total for c in clients if not c.errors
            ):
                await asyncio.sleep(0.05)
            print(json.dumps({"settled": True}), flush=True)
    stop.set()
    await asyncio.gather(*tasks)
    print(json.dumps({"clients": [vars(c) for c in clients]}))


class ClientProcess:
    """One `--role clients` process and its share of the clients."""

    def __init__(self, args: argparse.Namespace, clients: list[Client], number: int) -> None:
        self.file = Path(f"/tmp/fanout-{os.getpid()}-clients-{number}.json")
        self.file.write_text(json.dumps([vars(c) for c in clients]))
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--role", "clients", "--clients-file", str(self.file)]
            + ["--nice", str(args.client_nice)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    async def tell(self, line: str) -> dict[str, Any]:
        """Send `line` (empty: say nothing) and read the process's next answer."""
        assert self.process.stdin is not None and self.process.stdout is not None
        if line:
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
        answer = await asyncio.to_thread(self.process.stdout.readline)
        if not answer:
            raise RuntimeError(f"client process exited with {self.process.wait()}")
        result: dict[str, Any] = json.loads(answer)
        return result

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.file.unlink(missing_ok=True)


# --- The servers ------------------------------------------------------------------

# Websocket messages and frames over 64 KiB are refused at the server, as in
# production (docker-compose.yml): bench.server's MAX_MESSAGE.
# The same application without the frame writer: every update through ASGI.
APP_WITHOUT_FRAMES = "bench.asgi_without_frames:application"
SERVERS = {
    # The old path: daphne (Twisted, autobahn), one process per port.
    "daphne": "daphne",
    # uvicorn with the websockets package's legacy protocol, updates through ASGI.
    "uvicorn": "uvicorn --ws websockets",
    # uvicorn with the websockets package's sans-I/O protocol, updates through ASGI.
    "uvicorn-sansio": "uvicorn --ws websockets-sansio",
    # The production path: the sans-I/O protocol, and each update framed once
    # by the hub and written as is to every socket (easyharp_site.sockets).
    "uvicorn-frames": "uvicorn --ws websockets-sansio",
}


def server_command(server: str, port: int, workers: int) -> list[str]:
    if server == "daphne":
        return [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port)] + [
            f"--websocket-max-message-size={MAX_MESSAGE}",
            f"--websocket-max-frame-size={MAX_MESSAGE}",
            # Thousands of sockets opening at once on a busy machine take
            # longer than daphne's 5 s to get their answer (refused with 403).
            "--websocket_connect_timeout=120",
            APP,
        ]
    app = APP if server == "uvicorn-frames" else APP_WITHOUT_FRAMES
    return uvicorn_command(port, app=app, ws=SERVERS[server].split()[-1], workers=workers)


def start_servers(
    args: argparse.Namespace, server: str, env: dict[str, str]
) -> tuple[list[int], list[subprocess.Popen[bytes]]]:
    """`--workers` server processes: daphne one per port, uvicorn's sharing one port."""
    ports = [free_port() for _ in range(args.workers if server == "daphne" else 1)]
    workers = 1 if server == "daphne" else args.workers

    def profile(n: int) -> list[str]:
        if not args.profile_servers:
            return []
        return ["-m", "cProfile", "-o", f"{args.profile_servers}.{server}.{n}"]

    processes = []
    for n, port in enumerate(ports):
        command = server_command(server, port, workers)
        processes.append(
            subprocess.Popen(
                [command[0], *profile(n), *command[1:]],
                cwd=ROOT,
                env=env,
                # The access log (a line per socket) would drown the figures.
                stdout=subprocess.DEVNULL,
            )
        )
    return ports, processes


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def wait_for_port(port: int, process: subprocess.Popen[bytes], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server on port {port} exited with {process.returncode}")
        with contextlib.suppress(OSError):
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        await asyncio.sleep(0.2)
    raise RuntimeError(f"server on port {port} did not start in {seconds} s")


def process_tree(pid: int) -> list[int]:
    """`pid` and every process below it (uvicorn's workers are its children; Linux)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo += children.get(current, [])
    return tree


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux); 0 once it is gone."""
    with contextlib.suppress(OSError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return 0.0


def run_queue_seconds(pid: int) -> float:
    """Time the process's main thread spent runnable but waiting for a core (Linux)."""
    with contextlib.suppress(OSError):
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9
    return 0.0


def percentile(values: list[float], fraction: float) -> float:
    return values[min(len(values) - 1, int(fraction * len(values)))]


@dataclass
class Day:
    date: str
    deal: str
    players_file: Path
    # (session cookie, player id) of each signed-in watcher.
    watchers: list[tuple[str, int]] = field(default_factory=list)


def prepare(args: argparse.Namespace) -> Day:
    """Migrate, open today's deal and create the run's players (one per submission)."""
    setup_django(args.database_url, args.redis_url)
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.utils import timezone

    from games.rules import Deal
    from games.services import daily_deal_store

    call_command("migrate", verbosity=0)
    today = timezone.now().date()
    deal = Deal(daily_deal_store(date=today).number).code
    run_id = f"{time.time_ns():x}"
    names = [f"fan{run_id}-{n}" for n in range(int(args.rate * args.duration))]
    users = get_user_model()
    users.objects.bulk_create([users(username=name, password="!") for name in names])
    players_file = Path(f"/tmp/fanout-{run_id}-players.json")
    players_file.write_text(json.dumps(names))
    return Day(today.isoformat(), deal, players_file, sign_in_watchers(args, deal, run_id))


def sign_in_watchers(args: argparse.Namespace, deal: str, run_id: str) -> list[tuple[str, int]]:
    """`--signed-in` players, each with a game on the board, and a session each."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import (
        BACKEND_SESSION_KEY,
        HASH_SESSION_KEY,
        SESSION_KEY,
        get_user_model,
    )

    from ranking.actions import game_submit

    if not args.signed_in:
        return []
    print(f"signing in {args.signed_in} watchers, each with a game...", flush=True)
    users = get_user_model()
    names = [f"watch{run_id}-{n}" for n in range(args.signed_in)]
    users.objects.bulk_create([users(username=name, password="!") for name in names])
    logs = random_logs(deal, LOG_POOL, seed=args.seed + 1)
    rng = random.Random(args.seed + 1)
    store = import_module(settings.SESSION_ENGINE).SessionStore
    watchers = []
    for player in users.objects.filter(username__in=names).order_by("pk"):
        attempt_started_an_hour_ago(player)
        game_submit(player=player, deal=deal, log=rng.choice(logs))
        session = store()
        session[SESSION_KEY] = str(player.pk)
        session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        session[HASH_SESSION_KEY] = player.get_session_auth_hash()
        session.create()
        watchers.append((f"{settings.SESSION_COOKIE_NAME}={session.session_key}", player.pk))
    return watchers


@dataclass
class Figures:
    """What one run measured, for the printout and `--compare`."""

    server: str
    clients: int
    converged: int
    rate: float
    p50: float
    p99: float
    cpu_per_message_us: float
    ok: bool


async def run(args: argparse.Namespace, day: Day, server: str) -> Figures:
    deal, players_file = day.deal, day.players_file
    env = {**os.environ, **server_env(args.database_url, args.redis_url)}
    env["LIVE_BOARD_MAX_UPDATES_PER_SECOND"] = str(args.updates_per_second)
    env["PYTHONPATH"] = str(ROOT)
    ports, servers = start_servers(args, server, env)
    submitters: list[subprocess.Popen[bytes]] = []
    client_processes: list[ClientProcess] = []
    try:
        for port, process in zip(ports, servers, strict=True):
            await wait_for_port(port, process, 60)
        path = f"/ws/daily/{day.date}/leaderboard/?order=score"
        urls = [f"ws://127.0.0.1:{port}{path}" for port in ports]
        origins = [f"http://127.0.0.1:{port}" for port in ports]

        print(
            f"[{server}] connecting {args.clients} clients from {args.client_procs} "
            f"process(es) to {args.workers} server process(es)...",
            flush=True,
        )
        clients = [
            Client(urls[n % len(urls)], origins[n % len(origins)]) for n in range(args.clients)
        ]
        for client, (cookie, player_id) in zip(clients, day.watchers, strict=False):
            client.cookie, client.player_id = cookie, player_id
        started = time.monotonic()
        client_processes = [
            ClientProcess(args, clients[n :: args.client_procs], n)
            for n in range(args.client_procs)
        ]
        connected = sum(
            answer["connected"]
            for answer in await asyncio.gather(*(p.tell("") for p in client_processes))
        )
        print(
            f"connected in {time.monotonic() - started:.1f} s ({args.clients - connected} failed)",
            flush=True,
        )
        server_pids = [pid for process in servers for pid in process_tree(process.pid)]
        client_pids = [p.process.pid for p in client_processes]
        cpu_before = {pid: cpu_seconds(pid) for pid in server_pids + client_pids}
        waits_before = {pid: run_queue_seconds(pid) for pid in server_pids}
        wall_before = time.monotonic()

        # Several submitting processes, each a share of the rate, as several web
        # processes would; every submission is a new player's first game.
        names = json.loads(players_file.read_text())
        start_at = time.time() + 1.0
        for n in range(args.submitters):
            share = Path(f"{players_file}.{n}")
            share.write_text(json.dumps(names[n :: args.submitters]))
            submitters.append(
                subprocess.Popen(
                    [sys.executable, __file__, "--role", "submitter", "--players-file", str(share)]
                    + ["--deal", deal, "--rate", str(args.rate / args.submitters)]
                    + ["--seed", str(args.seed + n), "--start-at", str(start_at + n / args.rate)]
                    + ["--nice", str(args.nice)]
                    + ["--database-url", args.database_url, "--redis-url", args.redis_url],
                    stdout=subprocess.PIPE,
                    env=env,
                )
            )
        commits: list[float] = []
        submit_cpu = 0.0
        for submitter in submitters:
            out, _ = await asyncio.to_thread(submitter.communicate)
            if submitter.returncode != 0:
                raise RuntimeError(f"submitter failed with {submitter.returncode}")
            result = json.loads(out.decode().strip().splitlines()[-1])
            commits += result["commits"]
            submit_cpu += result["cpu"]
        commits.sort()
        submit_seconds = commits[-1] - start_at if commits else 0.0
        # Wait (bounded) until every watcher shows every commit, then one more
        # interval so that a last update of the entries can land too. The
        # board held at least its first snapshot's total when the clients connected.
        fresh_before = await fresh_snapshot(urls[0], origins[0])
        final_total = fresh_before["total"]
        await asyncio.gather(
            *(p.tell(f"settle {final_total} {args.settle_timeout}") for p in client_processes)
        )
        await asyncio.sleep(2.0 / args.updates_per_second)
        wall = time.monotonic() - wall_before
        cpu_after = {pid: cpu_seconds(pid) for pid in cpu_before}
        waits_after = {pid: run_queue_seconds(pid) for pid in waits_before}
        fresh = await fresh_snapshot(urls[0], origins[0])
        own = await asyncio.to_thread(own_entries, day)
        records = await asyncio.gather(*(p.tell("stop") for p in client_processes))
    finally:
        for process in [*servers, *submitters]:
            if process.poll() is None:
                process.terminate()
        for process in [*servers, *submitters]:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        for client_process in client_processes:
            client_process.close()
        for leftover in players_file.parent.glob(f"{players_file.name}*"):
            leftover.unlink()

    clients = [Client(**record) for answer in records for record in answer["clients"]]
    clients_cpu = sum(cpu_after[pid] - cpu_before[pid] for pid in client_pids)
    live_clients = [c for c in clients if not c.errors]
    latencies: list[float] = []
    missed = 0
    for client in live_clients:
        for k, committed_at in enumerate(commits, start=1):
            i = bisect.bisect_left(client.totals, client.base_total + k)
            if i == len(client.totals):
                missed += 1
            else:
                latencies.append(client.seen_at[i] - committed_at)
    latencies.sort()
    # When the last client first showed every commit, after the last commit.
    final_seen = [
        c.seen_at[i]
        for c in live_clients
        if (i := bisect.bisect_left(c.totals, c.base_total + len(commits))) < len(c.totals)
    ]
    caught_up = max(final_seen) - commits[-1] if commits and final_seen else float("nan")
    converged = sum(
        {key: value for key, value in c.board.items() if key != "me"} == fresh
        and (c.player_id is None or c.board.get("me") == own.get(c.player_id))
        for c in live_clients
    )
    base_totals = {c.base_total for c in live_clients}
    messages = [c.messages for c in live_clients]
    achieved = len(commits) / max(submit_seconds, 1e-9)

    print()
    print(
        f"[{server}] {args.workers} server process(es), clients {len(live_clients)} connected "
        f"of {args.clients} ({sum(c.player_id is not None for c in live_clients)} signed in, "
        f"{args.client_procs} client process(es))"
    )
    print(
        f"submissions {len(commits)} in {submit_seconds:.1f} s "
        f"({achieved:.1f}/s; target {args.rate}/s; "
        f"{args.submitters} submitting processes); "
        f"updates per board capped at {args.updates_per_second}/s"
    )
    print(
        f"board total {min(base_totals, default=0)} -> {fresh['total']} (expected +{len(commits)})"
    )
    print(
        f"messages per client: mean {statistics.mean(messages or [0]):.1f}, "
        f"max {max(messages, default=0)}; "
        f"bytes per client {statistics.mean([c.received_bytes for c in live_clients] or [0]):.0f}; "
        f"out of order {sum(c.out_of_order for c in live_clients)}"
    )
    p50 = p99 = float("nan")
    if latencies:
        p50, p99 = percentile(latencies, 0.50), percentile(latencies, 0.99)
        print(
            "latency commit -> client (s): "
            f"p50 {p50:.3f}  p90 {percentile(latencies, 0.90):.3f}  "
            f"p99 {p99:.3f}  max {latencies[-1]:.3f}  "
            f"({len(latencies)} deliveries, {missed} never seen)"
        )
    for pid in server_pids:
        used = cpu_after[pid] - cpu_before[pid]
        waited = waits_after[pid] - waits_before[pid]
        if used > 0.05 * wall:  # uvicorn's supervisor does next to nothing
            print(
                f"server process {pid} CPU {100 * used / wall:.0f}% of one core; "
                f"runnable but waiting for a core {100 * waited / wall:.0f}% of the time"
            )
    server_cpu = sum(cpu_after[pid] - cpu_before[pid] for pid in server_pids)
    delivered = sum(messages)
    cpu_per_message = 1e6 * server_cpu / delivered if delivered else float("nan")
    if delivered:
        # Independent of how much CPU other processes left the servers.
        print(
            f"server CPU per delivered message {cpu_per_message:.1f} us "
            f"({delivered} messages, {server_cpu:.1f} CPU s)"
        )
    print(f"load average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(
        f"client processes' CPU {100 * clients_cpu / wall:.0f}% of one core "
        f"({args.client_procs} process(es), after connecting)"
    )
    if commits:
        print(
            f"submitting processes' CPU per submission {1000 * submit_cpu / len(commits):.1f} ms "
            "(validation, service, announcement; setup included)"
        )
    print(
        f"converged: {converged} of {len(live_clients)} clients equal a fresh snapshot "
        f"(all had every commit {caught_up:.2f} s after the last one; "
        f"bound --settle-timeout {args.settle_timeout:.0f} s)"
    )
    for client in clients:
        if client.errors:
            print(f"client error: {client.errors[0]}")
            break
    ok = (
        converged == len(live_clients) == args.clients
        and missed == 0
        and fresh["total"] == min(base_totals, default=-1) + len(commits)
    )
    if latencies:
        ok = ok and p99 < args.p99_target
    # The stream must also have reached the rate asked for (within 5%).
    ok = ok and len(commits) >= 0.95 * args.rate * max(submit_seconds, 1e-9)
    print(f"[{server}] " + ("TARGET MET" if ok else "TARGET NOT MET"), flush=True)
    return Figures(server, len(clients), converged, achieved, p50, p99, cpu_per_message, ok)


def compare(args: argparse.Namespace, servers: list[str]) -> int:
    """Run each server in turn (`--rounds` times, alternating) and print them side by side."""
    figures: list[Figures] = []
    for _ in range(args.rounds):
        for server in servers:
            day = prepare(args)
            figures.append(asyncio.run(asyncio.wait_for(run(args, day, server), args.timeout)))
    print()
    print(
        f"compare: {args.clients} clients, {args.rate}/s for {args.duration:.0f} s, "
        f"{args.workers} server process(es) each; load average {os.getloadavg()[0]:.1f}"
    )
    print("server           CPU/message   ratio   p50      p99      rate     converged")
    old = statistics.median(f.cpu_per_message_us for f in figures if f.server == servers[0])
    for f in figures:
        print(
            f"{f.server:<16} {f.cpu_per_message_us:8.1f} us  {f.cpu_per_message_us / old:6.2f}  "
            f"{f.p50:6.3f} s {f.p99:6.3f} s {f.rate:5.1f}/s  {f.converged} of {f.clients}"
        )
    for server in servers[1:]:
        new = statistics.median(f.cpu_per_message_us for f in figures if f.server == server)
        print(
            f"{server}: server CPU per delivered message {new:.1f} us against {old:.1f} us "
            f"for {servers[0]} (medians): ratio {new / old:.2f}"
        )
    all_converged = all(f.converged == f.clients for f in figures)
    print("every client converged in every run" if all_converged else "NOT EVERY CLIENT CONVERGED")
    return 0 if all_converged else 1


def raise_file_limit(sockets: int) -> None:
    """Let this process and its children hold `sockets` sockets and some files besides."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = sockets + 1000
    if soft >= wanted:
        return
    if hard != resource.RLIM_INFINITY and hard < wanted:
        sys.exit(f"{sockets} sockets need {wanted} open files; the hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=50.0, help="submissions per second")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of submissions")
    parser.add_argument(
        "--server",
        choices=sorted(SERVERS),
        default="uvicorn-frames",
        help="the ASGI server and write path (uvicorn-frames, as in production)",
    )
    parser.add_argument(
        "--compare",
        metavar="SERVERS",
        nargs="?",
        const="daphne,uvicorn-frames",
        help="run these servers in turn, the first being the old path, and print them side by "
        "side (default daphne,uvicorn-frames; also: uvicorn, uvicorn-sansio)",
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="with --compare, how often to run each server"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="server processes (uvicorn: --workers sharing one port; daphne: one port each)",
    )
    parser.add_argument(
        "--client-procs", type=int, default=1, help="processes holding the clients' sockets"
    )
    parser.add_argument(
        "--client-nice", type=int, default=0, help="niceness of the client processes"
    )
    parser.add_argument(
        "--p99-target", type=float, default=0.5, help="delivery p99 the target asks (s)"
    )
    parser.add_argument(
        "--updates-per-second", type=float, default=4.0, help="LIVE_BOARD_MAX_UPDATES_PER_SECOND"
    )
    parser.add_argument("--submitters", type=int, default=2, help="submitting processes")
    parser.add_argument("--timeout", type=float, default=600.0, help="bound of the whole run (s)")
    parser.add_argument(
        "--settle-timeout", type=float, default=60.0, help="longest wait for stragglers (s)"
    )
    parser.add_argument(
        "--signed-in",
        type=int,
        default=0,
        help="of the clients, how many sign in as players with a game on the board (0)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--nice",
        type=int,
        default=5,
        help="niceness of the submitting processes, so the load generator does not starve "
        "the servers on a small machine (0: same priority)",
    )
    parser.add_argument(
        "--profile-servers", metavar="PATH", help="run the servers under cProfile, into PATH.<n>"
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get(
            "DATABASE_URL", "postgres://postgres@127.0.0.1:5432/easyharp_fanout"
        ),
    )
    parser.add_argument(
        "--redis-url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    )
    parser.add_argument(
        "--role",
        choices=["main", "submitter", "clients", "sink"],
        default="main",
        help=argparse.SUPPRESS,
    )
    parser.add_argument("--clients-file", help=argparse.SUPPRESS)
    parser.add_argument("--sink-port", type=int, help=argparse.SUPPRESS)
    parser.add_argument(
        "--floor",
        type=int,
        metavar="BYTES",
        help="only measure the CPU of one send() of BYTES to each of --clients loopback sockets",
    )
    parser.add_argument("--players-file", help=argparse.SUPPRESS)
    parser.add_argument("--deal", help=argparse.SUPPRESS)
    parser.add_argument("--start-at", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    # The server holds every client's socket (the floor's sink too), whatever the split.
    raise_file_limit(args.clients)
    if args.role == "clients":
        asyncio.run(run_clients(args))
        return 0
    if args.role == "sink":
        run_sink(args)
        return 0
    if args.floor:
        floor = send_floor(args.clients, args.floor)
        print(
            f"one send() of {args.floor} bytes to one of {args.clients} sockets: "
            f"{1e6 * floor:.1f} us of CPU"
        )
        return 0
    loopback_url(args.database_url, "--database-url")
    loopback_url(args.redis_url, "--redis-url")
    if not args.database_url.startswith(("postgres://", "postgresql://")):
        sys.exit("--database-url must be a PostgreSQL URL")
    if args.role == "submitter":
        run_submitter(args)
        return 0
    ensure_database(args.database_url)
    try:
        if args.compare:
            return compare(args, args.compare.split(","))
        figures = asyncio.run(asyncio.wait_for(run(args, prepare(args), args.server), args.timeout))
        return 0 if figures.ok else 1
    except TimeoutError:
        print(f"run stopped after --timeout {args.timeout} s")
        return 2


if __name__ == "__main__":
    sys.exit(main())
