"""Load benchmark: many concurrent players against the server on PostgreSQL and Redis.

Starts the ASGI server (uvicorn with production's flags, production settings,
rate limits raised through the environment) on a loopback port, and drives it
with concurrent players who sign up, fetch the day and its deal, start the
day's ranked attempt (their first game is ranked, the rest practice), submit
games (each with an `Idempotency-Key`; some sent twice at once, every failed or
unanswered one retried with the same key, as a careful client would), read both
boards, games and player pages, while websocket watchers hold the live boards
open.

Afterwards it checks, straight from the database, that every game the server
accepted is stored exactly once (one row per key, the id the client was
given, results equal to a replay of the stored log), that each board the API
serves equals a recomputation from the stored games, and that every watcher's
live board equals a fresh snapshot. It prints requests per second, latency
p50/p99 per endpoint, errors and the checks' result; the exit code is 1 when a
check fails.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/eh_hard \\
    REDIS_URL=redis://127.0.0.1:6379/4 \\
    .venv/bin/python bench/load.py --players 100 --watchers 100 --duration 30

The database is created if missing, migrated and emptied; the Redis database
is flushed (use ones of your own). Today's deal is pinned to deal 4, which has
a known win in tests/vectors, so the moves board fills too. Loopback only;
bounded by --players, --duration and --timeout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import os
import random
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import websockets

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.databases import ensure_database  # noqa: E402
from bench.server import uvicorn_command  # noqa: E402
from games.rules import Deal, Game, format_log  # noqa: E402

DEAL_NUMBER = 4  # tests/vectors/games.jsonl holds a win of this deal
VECTORS = ROOT / "tests" / "vectors" / "games.jsonl"
PASSWORD = "load-test-passphrase-42"
# A full stock cycle (59 taps and a recycle) leaves the table as dealt.
STOCK_CYCLE = ["S"] * 60
RETRYABLE = {0, 502, 503, 504}
SUBMIT_RETRIES = 40


# --- Environment and server ----------------------------------------------------------


def server_env(database_url: str, redis_url: str) -> dict[str, str]:
    """Production-like settings for a plain-HTTP loopback run, limits raised for load."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("THROTTLE_", "SECURE_"))}
    env.update(
        {
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "DEBUG": "false",
            "SECRET_KEY": "load-benchmark-secret-" + "x" * 40,
            "DAILY_DEAL_SALT": "load-benchmark-salt",
            "DAILY_DEAL_REQUIRE_WIN": "false",
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_SSL_REDIRECT": "false",
            "SECURE_COOKIES": "false",
            # Persistent connections leak one per thread under ASGI (see RELIABILITY.md).
            "DATABASE_CONN_MAX_AGE": os.environ.get("DATABASE_CONN_MAX_AGE", "0"),
            "THROTTLE_SIGNUP": "1000000/min",
            "THROTTLE_AUTH": "1000000/min",
            "THROTTLE_SUBMIT": "1000000/min",
            # Every simulated player comes from loopback: each gets a fair share.
            "REQUEST_CONCURRENCY_PER_ADDRESS": "100000",
            "SOCKETS_PER_ADDRESS": "1000000",
            "SOCKET_CONNECT_BURST": "1000000",
            "LOG_LEVEL": "WARNING",
        }
    )
    return env


def prepare(env: dict[str, str]) -> datetime.date:
    """Create, migrate and empty the database; flush Redis; pin today's deal."""
    import psycopg

    url = env["DATABASE_URL"]
    ensure_database(url)
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "--noinput"], cwd=ROOT, env=env, check=True,
                   capture_output=True)  # fmt: skip
    subprocess.run([*manage, "flush", "--noinput"], cwd=ROOT, env=env, check=True,
                   capture_output=True)  # fmt: skip
    import redis

    redis.Redis.from_url(env["REDIS_URL"]).flushdb()
    today = datetime.datetime.now(datetime.UTC).date()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO games_dailydeal (date, number, par, par_log, created_at)"
            " VALUES (%s, %s, NULL, '', now())",
            [today, DEAL_NUMBER],
        )
    return today


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """One server process (uvicorn, as in production) on a loopback port."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        self.log = Path(env.get("BENCH_SERVER_LOG", f"/tmp/easyharp-load-{self.port}.log"))

    def outage_reasons(self) -> Counter[str]:
        """Why the server answered 503, from its log (easyharp_site.middleware warnings)."""
        reasons: Counter[str] = Counter()
        with contextlib.suppress(OSError):
            for line in self.log.read_text(errors="replace").splitlines():
                if "database unavailable while serving" in line:
                    reasons[line.split(": ", 1)[-1][:90]] += 1
        return reasons

    def start(self) -> None:
        self.process = subprocess.Popen(
            uvicorn_command(self.port),
            cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=self.log.open("wb"),
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.base + "/healthz", timeout=2).status_code == 200:
                    return
            time.sleep(0.3)
        raise RuntimeError("the server did not become healthy within 60 s")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()


# --- Logs to submit ------------------------------------------------------------------


def game_logs(count: int, seed: int) -> list[list[str]]:
    """Distinct legal logs of the day's deal: wins (the vector's, lengthened by
    stock cycles) and random unfinished games of 50-700 actions."""
    deal = Deal(DEAL_NUMBER)
    win = next(
        json.loads(line)["log"].split()
        for line in VECTORS.read_text().splitlines()
        if line.strip() and json.loads(line)["deal"] == deal.code and json.loads(line).get("won")
    )
    rng = random.Random(seed)
    logs = [STOCK_CYCLE * k + win for k in range(max(1, count // 5))]
    while len(logs) < count:
        game = Game(deal)
        for _ in range(rng.randint(50, 700)):
            legal = [a for a in game.legal_actions() if a != "U"]
            if not legal or game.is_won:
                break
            game.play(rng.choice(legal))
        logs.append(game.log)
    return logs


# --- Measuring -----------------------------------------------------------------------


@dataclass
class Stats:
    """Latencies and outcomes per endpoint, plus a per-second status timeline."""

    started: float = field(default_factory=time.monotonic)
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, Counter[int]] = field(default_factory=lambda: defaultdict(Counter))
    timeline: dict[int, Counter[int]] = field(default_factory=lambda: defaultdict(Counter))
    bad_error_shapes: list[str] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    signup_seconds: float = 0.0

    def record(self, endpoint: str, seconds: float, status: int, body: bytes | None) -> None:
        self.latencies[endpoint].append(seconds)
        self.statuses[endpoint][status] += 1
        self.timeline[int(time.monotonic() - self.started)][status] += 1
        if status >= 400 and body is not None and not _error_shaped(body):
            self.bad_error_shapes.append(f"{endpoint} {status}: {body[:120]!r}")


def _error_shaped(body: bytes) -> bool:
    try:
        error = json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        return False
    return isinstance(error.get("code"), str) and isinstance(error.get("message"), str)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0


async def call(
    client: httpx.AsyncClient, stats: Stats, endpoint: str, method: str, path: str, **kw: Any
) -> httpx.Response | None:
    """One request, timed; None when no HTTP answer came (recorded as status 0)."""
    start = time.perf_counter()
    try:
        response = await client.request(method, path, **kw)
    except httpx.HTTPError as error:
        stats.record(endpoint, time.perf_counter() - start, 0, None)
        stats.errors[f"{endpoint}: {type(error).__name__}"] += 1
        return None
    stats.record(endpoint, time.perf_counter() - start, response.status_code, response.content)
    return response


# --- Players and watchers ------------------------------------------------------------


@dataclass
class Ledger:
    """What the clients were told: every accepted game id per idempotency key."""

    accepted: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    refused: Counter[str] = field(default_factory=Counter)
    unresolved: list[str] = field(default_factory=list)


async def submit(
    client: httpx.AsyncClient, stats: Stats, ledger: Ledger, body: dict[str, Any], key: str
) -> None:
    """Send one game until the server gives a definite answer, always with the same key."""
    for attempt in range(SUBMIT_RETRIES):
        response = await call(
            client, stats, "POST /api/games/", "POST", "/api/games/",
            json=body, headers={"Idempotency-Key": key},
        )  # fmt: skip
        status = 0 if response is None else response.status_code
        if status in (200, 201):
            ledger.accepted[key].add(response.json()["id"])  # type: ignore[union-attr]
            return
        if status not in RETRYABLE:
            ledger.refused[f"{status} {_code(response)}"] += 1
            return
        await asyncio.sleep(min(2.0, 0.2 * (attempt + 1)))
    ledger.unresolved.append(key)


def _code(response: httpx.Response | None) -> str:
    with contextlib.suppress(ValueError, KeyError, TypeError, AttributeError):
        return str(response.json()["error"]["code"])  # type: ignore[union-attr]
    return "?"


async def retrying(
    make: Callable[[], Awaitable[httpx.Response | None]], attempts: int = SUBMIT_RETRIES
) -> httpx.Response | None:
    response = None
    for attempt in range(attempts):
        response = await make()
        if response is not None and response.status_code not in RETRYABLE:
            return response
        await asyncio.sleep(min(2.0, 0.2 * (attempt + 1)))
    return response


async def sign_up(number: int, base: str, stats: Stats, seed: int) -> tuple[str, str] | None:
    """Register one player; returns (username, token)."""
    name = f"p{seed}_{number}"
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        signup = await retrying(
            lambda: call(client, stats, "POST /api/auth/register/", "POST",
                         "/api/auth/register/", json={"username": name, "password": PASSWORD})
        )  # fmt: skip
    if signup is None or signup.status_code != 201:
        stats.errors["sign-up failed"] += 1
        return None
    return name, signup.json()["token"]


async def player(
    number: int,
    account: tuple[str, str],
    base: str,
    stats: Stats,
    ledger: Ledger,
    logs: list[list[str]],
    stop_at: float,
    today: datetime.date,
    seed: int,
) -> None:
    rng = random.Random(seed * 100_003 + number)
    name, token = account
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:
        client.headers["Authorization"] = f"Token {token}"
        daily = await retrying(lambda: call(client, stats, "GET /api/daily/", "GET", "/api/daily/"))
        if daily is None or daily.status_code != 200:
            stats.errors["no daily deal"] += 1
            return
        deal = daily.json()["deal"]
        await call(client, stats, "GET /api/deals/{code}/", "GET", f"/api/deals/{deal}/")
        day = today.isoformat()
        await retrying(
            lambda: call(client, stats, "POST attempt", "POST", f"/api/daily/{day}/attempt/")
        )
        while time.monotonic() < stop_at:
            log = rng.choice(logs)
            body = {"deal": deal, "log": format_log(log) if rng.random() < 0.5 else log}
            key = str(uuid.uuid4())
            if rng.random() < 0.1:
                # The same request twice at once (a double click, a retry racing the original).
                await asyncio.gather(
                    submit(client, stats, ledger, body, key),
                    submit(client, stats, ledger, body, key),
                )
            else:
                await submit(client, stats, ledger, body, key)
            order = rng.choice(["score", "moves"])
            await call(client, stats, "GET leaderboard", "GET",
                       f"/api/daily/{day}/leaderboard/?order={order}&limit=50")  # fmt: skip
            if rng.random() < 0.3:
                around = f"/api/daily/{day}/leaderboard/?order=score&around=me&limit=10"
                await call(client, stats, "GET leaderboard around=me", "GET", around)
            if rng.random() < 0.2 and ledger.accepted:
                game_id = next(iter(ledger.accepted[rng.choice(list(ledger.accepted))]), None)
                if game_id is not None:
                    await call(
                        client, stats, "GET /api/games/{id}/", "GET", f"/api/games/{game_id}/"
                    )
            if rng.random() < 0.1:
                await call(
                    client, stats, "GET /api/players/{name}/", "GET", f"/api/players/{name}/"
                )
            await asyncio.sleep(rng.uniform(0, 0.05))


@dataclass
class Watcher:
    """One live-board socket and the board it has built from snapshot + updates."""

    order: str
    board: dict[str, Any] = field(default_factory=dict)
    messages: int = 0
    reconnects: int = 0
    failures: int = 0


async def watch(watcher: Watcher, base: str, today: datetime.date, done: asyncio.Event) -> None:
    url = base.replace("http", "ws") + f"/ws/daily/{today}/leaderboard/?order={watcher.order}"
    while not done.is_set():
        try:
            async with websockets.connect(url, origin=base, open_timeout=20) as socket_:
                while not done.is_set():
                    try:
                        message = json.loads(await asyncio.wait_for(socket_.recv(), 0.5))
                    except TimeoutError:
                        continue
                    watcher.messages += 1
                    if message["type"] == "snapshot":
                        watcher.board = message
                    elif message["type"] == "update":
                        watcher.board.update(message)
        except (OSError, websockets.WebSocketException, TimeoutError):
            watcher.failures += 1
        if not done.is_set():
            # A real client reconnects and starts again from a fresh snapshot.
            watcher.reconnects += 1
            await asyncio.sleep(0.5)


# --- Checks --------------------------------------------------------------------------


def recompute_boards(rows: list[dict[str, Any]]) -> dict[str, list[tuple[str, int, int, bool]]]:
    """Both boards of a day from its stored games: each player's ranked game, ordered."""
    best: dict[str, dict[str, dict[str, Any]]] = {"score": {}, "moves": {}}
    unknown = 2**31 - 1  # a ranked game with no measured duration sorts last

    def ms(game: dict[str, Any]) -> int:
        return unknown if game["duration_ms"] is None else int(game["duration_ms"])

    keys = {
        "score": lambda g: (-g["score"], g["moves"], ms(g), g["created_at"], g["id"]),
        "moves": lambda g: (g["moves"], -g["score"], ms(g), g["created_at"], g["id"]),
    }
    for game in rows:
        if not game["ranked"] or game["assisted"]:
            continue
        for order in ("score", "moves"):
            if order == "moves" and not game["won"]:
                continue
            if game["player"] in best[order]:
                raise AssertionError(f"two ranked games of {game['player']} on one day")
            best[order][game["player"]] = game
    return {
        order: [
            (g["player"], g["score"], g["moves"], g["id"])
            for g in sorted(best[order].values(), key=keys[order])
        ]
        for order in ("score", "moves")
    }


def check(
    env: dict[str, str],
    base: str,
    today: datetime.date,
    ledger: Ledger,
    watchers: list[Watcher],
) -> list[str]:
    """Everything the run must leave true; returns the problems found (none: passed)."""
    import psycopg
    from psycopg.rows import dict_row

    problems: list[str] = []
    with psycopg.connect(env["DATABASE_URL"], row_factory=dict_row) as conn:
        games = conn.execute(
            "SELECT g.id, u.username AS player, g.deal_number, g.log, g.score, g.moves, g.won,"
            " g.actions, g.idempotency_key, g.daily_id, g.created_at, g.voided_at,"
            " g.ranked, g.assisted, g.duration_ms"
            " FROM games_game g JOIN auth_user u ON u.id = g.player_id"
        ).fetchall()
        daily_id = conn.execute(
            "SELECT id FROM games_dailydeal WHERE date = %s", [today]
        ).fetchone()["id"]
    by_key: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for game in games:
        by_key[game["idempotency_key"]].append(game)
    for key, ids in ledger.accepted.items():
        stored = by_key.get(key, [])
        if len(ids) != 1:
            problems.append(f"key {key}: the server answered with several games {sorted(ids)}")
        if len(stored) != 1:
            problems.append(f"key {key}: {len(stored)} stored games (expected exactly 1)")
        elif stored[0]["id"] not in ids:
            problems.append(f"key {key}: stored game {stored[0]['id']} is not the one answered")
    extra = set(by_key) - set(ledger.accepted) - set(ledger.unresolved)
    if extra:
        problems.append(f"{len(extra)} stored games were never reported accepted to a client")
    for game in games:
        played = Game(Deal(game["deal_number"]))
        played.play_log(game["log"])
        if (played.score, played.moves, played.is_won, len(played.log)) != (
            game["score"], game["moves"], game["won"], game["actions"],
        ):  # fmt: skip
            problems.append(f"game {game['id']}: stored results differ from a replay of its log")
    expected = recompute_boards(
        [g for g in games if g["daily_id"] == daily_id and g["voided_at"] is None]
    )
    served: dict[str, list[dict[str, Any]]] = {}
    for order in ("score", "moves"):
        entries: list[dict[str, Any]] = []
        while True:
            page = httpx.get(
                f"{base}/api/daily/{today}/leaderboard/",
                params={"order": order, "limit": 100, "offset": len(entries)},
                timeout=30,
            ).json()
            entries += page["entries"]
            if not page["entries"] or len(entries) >= page["total"]:
                break
        served[order] = entries
        got = [(e["player"], e["score"], e["moves"], e["game"]) for e in entries]
        if got != expected[order]:
            problems.append(
                f"{order} board: served {len(got)} entries differing from the "
                f"{len(expected[order])} recomputed from stored games"
            )
        if [e["rank"] for e in entries] != list(range(1, len(entries) + 1)):
            # Ranks are unique here: no two stored games tie on every key.
            problems.append(f"{order} board: ranks are not 1..n")
    for watcher in watchers:
        top = served[watcher.order][:50]
        if watcher.board.get("entries") != top or watcher.board.get("total") != len(
            served[watcher.order]
        ):
            problems.append(
                f"a {watcher.order} watcher's live board differs from a fresh snapshot: "
                f"total {watcher.board.get('total')} vs {len(served[watcher.order])}, "
                f"{len(watcher.board.get('entries') or [])} vs {len(top)} entries, "
                f"first differing: {_first_difference(watcher.board.get('entries') or [], top)}"
            )
    return problems


def _first_difference(mine: list[dict[str, Any]], fresh: list[dict[str, Any]]) -> str:
    for index, (a, b) in enumerate(zip(mine, fresh, strict=False)):
        if a != b:
            return f"#{index}: {a} != {b}"
    return "none (lengths differ)" if len(mine) != len(fresh) else "none"


# --- The run -------------------------------------------------------------------------


@dataclass
class Result:
    stats: Stats
    ledger: Ledger
    watchers: list[Watcher]
    problems: list[str]
    elapsed: float
    stored_games: int = 0
    outage_reasons: Counter[str] = field(default_factory=Counter)


async def drive(
    base: str,
    today: datetime.date,
    args: argparse.Namespace,
    stats: Stats,
    ledger: Ledger,
    watchers: list[Watcher],
    side_task: Callable[[Stats], Awaitable[None]] | None,
) -> None:
    logs = await asyncio.to_thread(game_logs, 40, args.seed)
    done = asyncio.Event()
    watch_tasks = [asyncio.create_task(watch(w, base, today, done)) for w in watchers]
    # Sign-up first: each one hashes a password (PBKDF2), the costliest request,
    # and is timed on its own; the load window starts once everyone is in.
    signing = time.monotonic()
    accounts = await asyncio.gather(
        *(sign_up(n, base, stats, args.seed) for n in range(args.players))
    )
    stats.signup_seconds = time.monotonic() - signing
    stats.started = time.monotonic()
    stats.timeline.clear()  # the timeline and req/s cover the load window only
    stop_at = time.monotonic() + args.duration
    players = [
        asyncio.create_task(
            player(n, account, base, stats, ledger, logs, stop_at, today, args.seed)
        )
        for n, account in enumerate(accounts)
        if account is not None
    ]
    side = asyncio.create_task(side_task(stats)) if side_task is not None else None
    await asyncio.gather(*players)
    if side is not None:
        await side
    # Let the live boards settle: coalesced updates follow within a fraction of a second.
    await asyncio.sleep(args.settle)
    done.set()
    await asyncio.gather(*watch_tasks)


def run(
    args: argparse.Namespace, side_task: Callable[[Stats], Awaitable[None]] | None = None
) -> Result:
    """Prepare, serve, drive, check; the fault benchmark passes its faults as `side_task`."""
    env = server_env(args.database_url, args.redis_url)
    today = prepare(env)
    server = Server(env)
    server.start()
    stats, ledger = Stats(), Ledger()
    watchers = [Watcher("score" if i % 2 == 0 else "moves") for i in range(args.watchers)]
    started = time.monotonic()
    try:
        asyncio.run(
            asyncio.wait_for(
                drive(server.base, today, args, stats, ledger, watchers, side_task), args.timeout
            )
        )
        elapsed = time.monotonic() - started
        problems = check(env, server.base, today, ledger, watchers)
    finally:
        server.stop()
    result = Result(stats, ledger, watchers, problems, elapsed)
    result.outage_reasons = server.outage_reasons()
    result.stored_games = sum(len(ids) for ids in ledger.accepted.values())
    return result


def report(result: Result, args: argparse.Namespace) -> None:
    stats, ledger = result.stats, result.ledger
    total = sum(len(v) for v in stats.latencies.values())
    busy = max(stats.timeline) + 1 if stats.timeline else 1
    signups = len(stats.latencies.get("POST /api/auth/register/", []))
    total -= signups
    print(f"players {args.players}, watchers {args.watchers}, load {args.duration:.0f} s")
    print(f"sign-up phase: {signups} sign-ups in {stats.signup_seconds:.1f} s")
    print(f"load phase: {total} requests, {total / busy:.0f} req/s over {busy} s")
    print(f"{'endpoint':<34}{'count':>7}{'p50 ms':>9}{'p99 ms':>9}  statuses")
    for endpoint in sorted(stats.latencies):
        values = stats.latencies[endpoint]
        statuses = ", ".join(f"{s}: {n}" for s, n in sorted(stats.statuses[endpoint].items()))
        print(
            f"{endpoint:<34}{len(values):>7}{percentile(values, 0.5) * 1000:>9.1f}"
            f"{percentile(values, 0.99) * 1000:>9.1f}  {statuses}"
        )
    print(f"games accepted {len(ledger.accepted)}, refused {sum(ledger.refused.values())}"
          f" {dict(ledger.refused) or ''}, unresolved {len(ledger.unresolved)}")  # fmt: skip
    updates = sum(w.messages for w in result.watchers)
    reconnects = sum(w.reconnects for w in result.watchers)
    print(f"websocket messages {updates}, reconnects {reconnects}")
    errors = dict(stats.errors)
    print(f"transport errors {sum(errors.values())} {errors or ''}")
    print(f"refusals not in the error shape: {len(stats.bad_error_shapes)}")
    for reason, count in result.outage_reasons.most_common(5):
        print(f"    503 because: {reason} ({count})")
    for line in stats.bad_error_shapes[:5]:
        print("   ", line)
    if result.problems:
        print(f"CHECK FAILED ({len(result.problems)} problems)")
        for problem in result.problems[:20]:
            print("   ", problem)
    else:
        print(
            "CHECK PASSED: every accepted game stored exactly once and equal to its replay; "
            "both boards equal a recomputation from stored games; every live board converged"
        )


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--players", type=int, default=100)
    p.add_argument("--watchers", type=int, default=100)
    p.add_argument("--duration", type=float, default=30.0, help="seconds of load")
    p.add_argument("--settle", type=float, default=3.0, help="seconds for live boards to settle")
    p.add_argument("--timeout", type=float, default=600.0, help="bound on the whole run")
    p.add_argument("--seed", type=int, default=int(time.time()) % 100_000)
    p.add_argument("--database-url", default=os.environ.get(
        "DATABASE_URL", "postgres://postgres@127.0.0.1:5432/eh_hard"))  # fmt: skip
    p.add_argument("--redis-url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/4"))
    return p


def main() -> int:
    args = parser().parse_args()
    if not args.database_url.startswith("postgres"):
        raise SystemExit("bench/load.py needs PostgreSQL: set DATABASE_URL=postgres://...")
    result = run(args)
    report(result, args)
    failed = result.problems or result.ledger.unresolved or result.stats.bad_error_shapes
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
