"""Replays known abuse against a real server and prints, per item, whether the limit held.

Starts the server (uvicorn, as in production) with production-like settings
(DEBUG off, the environment of tests/security/test_server_limits.py's server: a
throwaway SQLite database, `REQUEST_MAX_BODY_BYTES=100000`, the default rate
limits) on a free loopback port, then:

1. sign-up and password guessing: sign-ups carrying other accounts' tokens and
   forged `X-Forwarded-For` headers, guesses at one player spread over many
   accounts' tokens, and guesses at one player from 40 loopback addresses;
2. a parallel burst of 60 hints against the 30/min limit (over two server
   processes sharing Redis with `--redis-url`);
6. multipart bodies of 10 MB and 52 MB, a chunked body with no length, a
   multipart body without a boundary;
7. websocket upgrades to paths nobody serves, and a look at the server's log
   for a traceback;
8. TRACE, the Content-Security-Policy, and the browsable API asked for by a browser;
9. a websocket from the right host at another port;
3. a read of a past day nobody prepared: a fast 404, no solver run;
26.2 (issue 26, item 2) look-alikes of a taken name, one of each class
   (a modifier letter, a hyphen, a Latin letter with a mark, a small capital,
   a Cyrillic letter, another script's digit);
26.4 (issue 26, item 4) the share cards and og tags asked for under Host
   variants (`127.0.0.1:1`, `:99999`, `127.0.0.1.`): one picture, one link.
26.3. 45 wrong passwords at once for one player from one address, then 70
   from 70 addresses, while the player signs in from a known browser;
26.5. standings at 9999-12-31 and 9999-12-27 (a 400, not a 500), and with Redis
   away (a third server process, its REDIS_URL at a closed port): share
   pictures drawn and `/healthz/` degraded;
26.6. on that server: 25 sign-ups and 45 wrong passwords still limited, and
   the log says so once;
25.4 (issue 25, item 4) heavy work off the web process, each flood against a
   server of its own (production's hint settings, a bounded database pool on
   PostgreSQL with `--database-url`), while a bystander from another address
   reads `GET /api/daily/` every 100 ms and submits a practice game every
   600 ms: 30 parallel anonymous hints from one address (the 30/min limit),
   then 60 parallel replays of 20,000-action games (four games, cold; the
   60/min limit), each sent by a process of its own so that sending it costs
   the bystander's process nothing. The bystander's p99 must stay under 100 ms.
heavy. the heavy work shared: for 20 s, 8 accounts on one address each ask for
   hints (production's solver settings), replays and share pictures one after
   another, while a bystander on another address reads and submits as above
   and asks for 3 hints and 3 replays of games not built yet: each answered,
   none of its requests failed, and the p99 of its reads under 100 ms (its
   submissions' times are shown).

    .venv/bin/python bench/abuse.py
    .venv/bin/python bench/abuse.py --redis-url redis://127.0.0.1:6379/5 --servers 2
    .venv/bin/python bench/abuse.py --only floods \
        --database-url postgres://postgres@127.0.0.1:5432/eh_flood
    .venv/bin/python bench/abuse.py --only shared --redis-url redis://127.0.0.1:6379/5 \
        --database-url postgres://postgres@127.0.0.1:5432/eh_flood

Loopback only (127.0.0.0/8); about 300 requests in all, each with a timeout,
and the whole run stops by itself within `--deadline` seconds. The exit code is
1 when any item did not hold.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import httpx
import websockets

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load  # noqa: E402
from databases import ensure_database  # noqa: E402
from engine import random_log  # noqa: E402

from games import rules  # noqa: E402

ROOT = load.ROOT
PASSWORD = "abuse-bench-passphrase-42"
TIMEOUT = 30.0
HINT = {"deal": "EH1-N-AAAAAAB", "log": ""}
# A past day inside the served range that nobody prepared.
UNPREPARED_DAY = "2026-02-01"


def server_env(
    database: Path, redis_url: str | None, database_url: str | None = None
) -> dict[str, str]:
    """Production-like settings as in tests/security/test_server_limits.py, default limits;
    on PostgreSQL (`database_url`, emptied) with compose's pool of 20 connections."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("THROTTLE_", "SECURE_", "DAILY_DEAL_"))
        and key not in {"REDIS_URL", "DATABASE_URL", "DEBUG", "SECRET_KEY"}
    }
    env.update(
        {
            "DATABASE_URL": f"sqlite:///{database}",
            "DEBUG": "false",
            "SECRET_KEY": "abuse-bench-secret-" + "k" * 40,
            "DAILY_DEAL_SALT": "abuse-bench-salt",
            "DAILY_DEAL_REQUIRE_WIN": "false",
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_SSL_REDIRECT": "false",
            "SECURE_COOKIES": "false",
            "REQUEST_MAX_BODY_BYTES": "100000",
            # Keeps the 30 hints that get through cheap; the limit is what is tried.
            "HINT_SOLVER_SECONDS": "0.2",
            "LOG_LEVEL": "WARNING",
        }
    )
    if redis_url:
        env["REDIS_URL"] = redis_url
    if database_url:
        env.update(DATABASE_URL=database_url, DATABASE_POOL_MAX_SIZE="20")
    return env


@dataclass
class Item:
    number: str
    title: str
    lines: list[str] = field(default_factory=list)
    held: bool = True

    def check(self, ok: bool, line: str) -> None:
        self.lines.append(f"{'held  ' if ok else 'FAILED'}  {line}")
        self.held = self.held and ok


@dataclass
class Bench:
    bases: list[str]
    logs: list[Path]
    day: str
    items: list[Item] = field(default_factory=list)

    @property
    def base(self) -> str:
        return self.bases[0]

    def item(self, number: str, title: str) -> Item:
        self.items.append(Item(number, title))
        return self.items[-1]


def client(address: str = "127.0.0.1") -> httpx.Client:
    """A client whose connections come from `address` (any of 127.0.0.0/8)."""
    return httpx.Client(timeout=TIMEOUT, transport=httpx.HTTPTransport(local_address=address))


def post_json(http: httpx.Client, url: str, body: Any, **headers: str) -> httpx.Response:
    return http.post(
        url, content=json.dumps(body), headers={"Content-Type": "application/json", **headers}
    )


def fresh_window(seconds_needed: float = 20.0) -> None:
    """Wait for the next minute if this one ends too soon (limits count in fixed windows)."""
    into = time.time() % 60
    if into > 60 - seconds_needed:
        time.sleep(60 - into + 0.5)


@contextlib.contextmanager
def timed() -> Iterator[Callable[[], float]]:
    start = time.perf_counter()
    yield lambda: time.perf_counter() - start


# --- 1. Sign-up and guessing ----------------------------------------------------------


def sign_up(http: httpx.Client, base: str, name: str, **headers: str) -> httpx.Response:
    return post_json(http, f"{base}/api/auth/register/", {"username": name, "password": PASSWORD},
                     **headers)  # fmt: skip


def accounts_and_guesses(bench: Bench) -> None:
    item = bench.item("1", "sign-up and guessing count per address and per target name")
    base = bench.base
    with client("127.0.0.200") as other:
        for name in ("victim", "victim2"):
            assert sign_up(other, base, name).status_code == 201, "could not make the victims"
    statuses: Counter[int] = Counter()
    tokens: list[str] = []
    with client() as http, timed() as took:
        for i in range(30):
            headers = {"X-Forwarded-For": f"203.0.113.{i}"}
            if tokens:
                headers["Authorization"] = f"Token {tokens[-1]}"
            response = sign_up(http, base, f"abuser{i}", **headers)
            statuses[response.status_code] += 1
            if response.status_code == 201:
                tokens.append(response.json()["token"])
    item.check(
        statuses[201] == 20 and statuses[429] == 10,
        f"30 sign-ups from one address, each with the newest account's token and a forged "
        f"X-Forwarded-For: {statuses[201]} accepted, {statuses[429]} refused (limit 20/hour) "
        f"in {took():.1f} s",
    )

    fresh_window()
    statuses.clear()
    with client() as http, timed() as took:
        for i in range(40):
            response = post_json(
                http, f"{base}/api/auth/token/", {"username": "victim", "password": f"guess{i}"},
                Authorization=f"Token {tokens[i % len(tokens)]}",
            )  # fmt: skip
            statuses[response.status_code] += 1
    item.check(
        statuses[401] == 20 and statuses[429] == 20,
        f"40 guesses at one player from one address over {len(tokens)} accounts' tokens: "
        f"{statuses[401]} checked, {statuses[429]} refused (limit 20/hour per name and "
        f"address) in {took():.1f} s",
    )

    statuses.clear()
    with timed() as took:
        for i in range(70):
            with client(f"127.0.0.{10 + i}") as http:
                response = post_json(http, f"{base}/api/auth/token/",
                                     {"username": "victim2", "password": f"guess{i}"})  # fmt: skip
                statuses[response.status_code] += 1
    item.check(
        statuses[401] == 60 and statuses[429] == 10,
        f"70 guesses at one player from 70 addresses: {statuses[401]} checked, "
        f"{statuses[429]} refused (limit 60/hour per name) in {took():.1f} s",
    )


# --- 26.3. No lock-out ----------------------------------------------------------------


async def _guesses_at_once(bases: list[str], username: str, count: int) -> Counter[int]:
    transport = httpx.AsyncHTTPTransport(local_address="127.0.0.90")
    async with httpx.AsyncClient(
        timeout=TIMEOUT, transport=transport, limits=httpx.Limits(max_connections=count)
    ) as http:
        calls = [
            http.post(f"{bases[i % len(bases)]}/api/auth/token/",
                      json={"username": username, "password": f"guess{i}"})
            for i in range(count)
        ]  # fmt: skip
        responses = await asyncio.gather(*calls, return_exceptions=True)
    return Counter(r.status_code if isinstance(r, httpx.Response) else 0 for r in responses)


def no_lockout(bench: Bench) -> None:
    item = bench.item("26.3", "guessing wrong on purpose locks nobody out")
    credentials = {"username": "owner", "password": PASSWORD}
    with client("127.0.0.80") as owner, timed() as took:
        assert sign_up(owner, bench.base, "owner").status_code == 201, "could not make the owner"
        # Signing in once makes this client (it keeps cookies) a known device.
        known = post_json(owner, f"{bench.base}/api/auth/token/", credentials).status_code
        at_once = asyncio.run(_guesses_at_once(bench.bases, "owner", 45))
        item.check(
            at_once[401] <= 20 and at_once[401] + at_once[429] == 45,
            f"45 wrong passwords at once from one address: {at_once[401]} checked, "
            f"{at_once[429]} refused (limit 20/hour per name and address)",
        )
        spread: Counter[int] = Counter()
        for i in range(70):
            with client(f"127.0.1.{10 + i}") as http:
                wrong = {"username": "owner", "password": f"spread{i}"}
                url = f"{bench.bases[i % len(bench.bases)]}/api/auth/token/"
                spread[post_json(http, url, wrong).status_code] += 1
        checked = at_once[401] + spread[401]
        item.check(
            checked <= 60,
            f"then 70 from 70 addresses: {spread[401]} checked, {spread[429]} refused; "
            f"{checked} guesses checked in this hour in all (limit 60/hour per name)",
        )
        statuses = [known] + [
            post_json(owner, f"{base}/api/auth/token/", credentials).status_code
            for base in bench.bases
        ]
        item.check(
            statuses == [200] * len(statuses),
            f"the owner, from a browser it signed in on before, during the attack: {statuses} "
            f"in {took():.1f} s",
        )
    with client("127.0.0.81") as new_browser:
        status = post_json(new_browser, f"{bench.base}/api/auth/token/", credentials).status_code
    item.lines.append(f"        (a browser the owner never used waits for the hour: {status})")


# --- 2. A parallel burst --------------------------------------------------------------


async def _burst(bases: list[str], count: int) -> Counter[str]:
    """`count` hints at once: how many were answered (200), refused by the pool
    (503 `busy`: past the limit's counter too), or refused by code."""
    async with httpx.AsyncClient(
        timeout=TIMEOUT, limits=httpx.Limits(max_connections=count)
    ) as http:
        calls = [http.post(f"{bases[i % len(bases)]}/api/hint/", json=HINT) for i in range(count)]
        responses = await asyncio.gather(*calls, return_exceptions=True)
    return Counter(
        ("answered" if r.status_code == 200 else _code(r))
        if isinstance(r, httpx.Response)
        else "no answer"
        for r in responses
    )


def parallel_burst(bench: Bench) -> None:
    item = bench.item("2", "a parallel burst gets exactly the limit through")
    fresh_window(30)
    with timed() as took:
        outcomes = asyncio.run(_burst(bench.bases, 60))
    where = f"over {len(bench.bases)} server processes" if len(bench.bases) > 1 else "one process"
    # Past the counter: answered, or refused by the pool behind it. Requests the
    # fair share turned away (`too_many_at_once`) never reached the counter; at
    # least one `throttled` shows that more than the limit did.
    counted = outcomes["answered"] + outcomes["busy"]
    item.check(
        counted == 30 and outcomes["throttled"] >= 1 and sum(outcomes.values()) == 60,
        f"60 hints at once ({where}) against 30/min: {counted} past the limit "
        f"({outcomes['answered']} answered, {outcomes['busy']} busy), "
        f"{outcomes['throttled']} throttled, {outcomes['too_many_at_once']} too many at once, "
        f"{60 - counted - outcomes['throttled'] - outcomes['too_many_at_once']} other, "
        f"in {took():.1f} s",
    )


# --- 6. Bodies --------------------------------------------------------------------------


def _chunks(total: int, size: int = 65_536) -> Iterator[bytes]:
    for _ in range(total // size):
        yield b"x" * size


def bodies(bench: Bench, token: str) -> None:
    item = bench.item("6", "every body is capped, whatever its content type")
    base = bench.base
    multipart = {"Content-Type": "multipart/form-data; boundary=abusebench"}
    cases = [
        ("10 MB multipart to /api/hint/", "/api/hint/", b"x" * 10_000_000, multipart),
        ("52 MB multipart to /api/games/", "/api/games/", b"x" * 52_000_000,
         {**multipart, "Authorization": f"Token {token}"}),
        ("10 MB chunked JSON, no length, to /api/hint/", "/api/hint/", _chunks(10_000_000),
         {"Content-Type": "application/json"}),
    ]  # fmt: skip
    with client() as http:
        for label, path, content, headers in cases:
            with timed() as took:
                try:
                    response = http.post(f"{base}{path}", content=content, headers=headers)
                    status, code = response.status_code, _code(response)
                except httpx.HTTPError as error:  # the server may close while the client sends
                    status, code = 0, type(error).__name__
            item.check(
                status == 413 and code == "request_too_large",
                f"{label}: {status} {code} in {took():.2f} s",
            )
        response = http.post(f"{base}/api/hint/", content=b"--x--",
                             headers={"Content-Type": "multipart/form-data"})  # fmt: skip
        item.check(
            response.status_code == 415 and _code(response) == "unsupported_media_type",
            f"multipart without a boundary: {response.status_code} {_code(response)}",
        )


def _code(response: httpx.Response) -> str:
    try:
        return str(response.json()["error"]["code"])
    except (ValueError, KeyError, TypeError):
        return f"not the error shape: {response.text[:60]!r}"


# --- 7 and 9. Sockets -----------------------------------------------------------------


async def _socket_status(url: str, origin: str | None) -> int:
    try:
        connection = await websockets.connect(url, origin=origin, open_timeout=10)  # type: ignore[arg-type]
    except websockets.InvalidStatus as refused:
        return int(refused.response.status_code)
    await connection.close()
    return 101


def sockets(bench: Bench) -> None:
    host = bench.base.removeprefix("http://")
    own = f"http://{host}"
    item = bench.item("7", "a socket to an unrouted path is a clean 403")
    before = sum(_traceback_count(log) for log in bench.logs)
    for path in ["/ws/nope/", f"/ws/daily/{bench.day}/leaderboard", "/"]:
        status = asyncio.run(_socket_status(f"ws://{host}{path}", own))
        item.check(status == 403, f"upgrade to {path}: {status}")
    tracebacks = sum(_traceback_count(log) for log in bench.logs) - before
    item.check(tracebacks == 0, f"tracebacks in the server log: {tracebacks}")

    item = bench.item("9", "the websocket origin is compared whole")
    board = f"ws://{host}/ws/daily/{bench.day}/leaderboard/?order=score"
    for origin, expected in [(own, 101), ("http://127.0.0.1:9999", 403),
                             (own.replace("http:", "https:"), 403), (None, 403)]:  # fmt: skip
        status = asyncio.run(_socket_status(board, origin))
        item.check(status == expected, f"Origin {origin}: {status} (expected {expected})")


def _traceback_count(log: Path) -> int:
    with contextlib.suppress(OSError):
        return log.read_text(errors="replace").count("Traceback")
    return 0


# --- 8. Headers and methods -----------------------------------------------------------


def headers_and_methods(bench: Bench) -> None:
    item = bench.item("8", "unused methods refused, CSP on pages, JSON only")
    with client() as http:
        for method in ("TRACE", "CONNECT", "PROPFIND"):
            response = http.request(method, f"{bench.base}/")
            item.check(
                response.status_code == 405 and _code(response) == "method_not_allowed",
                f"{method} /: {response.status_code} {_code(response)}",
            )
        for path in ("/", "/play/", "/api/docs/"):
            policy = http.get(f"{bench.base}{path}").headers.get("content-security-policy", "")
            item.check(
                "script-src 'self'" in policy and "unsafe-inline" not in policy,
                f"GET {path}: Content-Security-Policy {'present' if policy else 'missing'}",
            )
        response = http.get(f"{bench.base}/api/daily/", headers={"Accept": "text/html,*/*;q=0.8"})
        kind = response.headers.get("content-type", "")
        item.check(kind.startswith("application/json"), f"a browser asking /api/daily/: {kind}")


# --- 3. Reads never run the solver ----------------------------------------------------


def unprepared_day(bench: Bench) -> None:
    item = bench.item("3", "a past day nobody prepared is a fast 404")
    with client() as http:
        for path in (f"/api/daily/{UNPREPARED_DAY}/", f"/api/daily/{UNPREPARED_DAY}/leaderboard/",
                     f"/leaderboard/{UNPREPARED_DAY}/"):  # fmt: skip
            with timed() as took:
                response = http.get(f"{bench.base}{path}")
            item.check(
                response.status_code == 404 and took() < 2.0,
                f"GET {path}: {response.status_code} in {took() * 1000:.0f} ms",
            )


# --- Issue 26: look-alike names, Host variants ------------------------------------------

LOOKALIKES = [
    "honest\u02cdhannah",  # MODIFIER LETTER LOW MACRON for _
    "honest\u2010hannah",  # HYPHEN for _
    "hone\u1e63t_hannah",  # s with a dot below
    "\u029conest_hannah",  # LATIN LETTER SMALL CAPITAL H
    "h\u043enest_hannah",  # Cyrillic o
    "honest_hannah\u0661",  # ARABIC-INDIC DIGIT ONE
]
HOST_VARIANTS = ["127.0.0.1:1", "127.0.0.1:35", "127.0.0.1:99999", "127.0.0.1."]


def lookalike_names(bench: Bench) -> None:
    item = bench.item("26.2", "look-alikes of a taken name are refused, by class")
    with client("127.0.0.202") as http:
        taken = sign_up(http, bench.base, "honest_hannah")
        item.check(taken.status_code == 201, f"honest_hannah: {taken.status_code}")
        for name in LOOKALIKES:
            response = sign_up(http, bench.base, name)
            item.check(
                response.status_code in (400, 409),
                f"{name.encode('ascii', 'backslashreplace').decode()}: "
                f"{response.status_code} {_code(response)}",
            )


def host_variants(bench: Bench, redis_url: str | None) -> None:
    item = bench.item("26.4", "one share card and one link whatever the Host")
    card, page = f"/cards/days/{bench.day}.png", f"/leaderboard/{bench.day}/"
    stored = _card_keys(redis_url)
    pictures, links = set(), set()
    with client("127.0.0.203") as http:
        for host in HOST_VARIANTS:
            with timed() as took:
                response = http.get(f"{bench.base}{card}", headers={"Host": host})
            pictures.add(response.content)
            item.check(
                response.status_code == 200,
                f"{card} as {host}: {response.status_code} in {took() * 1000:.0f} ms",
            )
            head = http.get(f"{bench.base}{page}", headers={"Host": host}).text.split("<body")[0]
            links.add(head.split('property="og:image" content="', 1)[-1].split('"', 1)[0])
    item.check(len(pictures) == 1, f"different pictures: {len(pictures)}")
    item.check(len(links) == 1, f"different og:image links: {len(links)} {sorted(links)}")
    if redis_url:
        added = _card_keys(redis_url) - stored
        item.check(added <= 1, f"cards stored in Redis: {added}")


def _card_keys(redis_url: str | None) -> int:
    if not redis_url:
        return 0
    import redis

    # The cards' cache keys under Django's prefix (version 1); the limit's counters differ.
    return sum(1 for _ in redis.Redis.from_url(redis_url).scan_iter(":1:card:*"))


# --- 26.5 and 26.6. Far dates, and Redis away ---------------------------------------------


def far_dates(bench: Bench, token: str) -> None:
    item = bench.item("26.5", "a day the API cannot serve is a 400, never a 500")
    auth = {"Authorization": f"Token {token}"}
    with client() as http:
        league = post_json(http, f"{bench.base}/api/leagues/", {"name": "Far dates"}, **auth)
        slug = league.json().get("slug", "none")
        for path in ("/api/standings/", f"/api/leagues/{slug}/standings/"):
            for at in ("9999-12-31", "9999-12-27"):
                for period in ("week", "month"):
                    response = http.get(f"{bench.base}{path}?at={at}&period={period}",
                                        headers=auth)  # fmt: skip
                    item.check(
                        response.status_code == 400 and _code(response) == "invalid",
                        f"GET {path}?at={at}&period={period}: {response.status_code} "
                        f"{_code(response)}",
                    )


def redis_away(bench: Bench, env: dict[str, str], log: Path) -> None:
    """A server of the same database whose Redis is a port nobody listens on."""
    server = load.Server({**env, "REDIS_URL": "redis://127.0.0.1:1/0",
                          "BENCH_SERVER_LOG": str(log)})  # fmt: skip
    server.start()
    try:
        item = bench.item("26.5", "with Redis away, pictures are drawn and /healthz/ says so")
        with client() as http:
            health = http.get(f"{server.base}/healthz/")
            item.check(
                health.status_code == 200 and health.json().get("status") == "degraded",
                f"/healthz/: {health.status_code} {health.json().get('status')}, "
                f"redis {health.json().get('redis')}",
            )
            card = http.get(f"{server.base}/cards/days/{bench.day}.png")
            item.check(
                card.status_code == 200 and card.content.startswith(b"\x89PNG"),
                f"/cards/days/{bench.day}.png: {card.status_code} "
                f"{card.headers.get('content-type')}",
            )
        item = bench.item("26.6", "with Redis away, the limits hold in each process")
        statuses: Counter[int] = Counter()
        with client("127.0.0.100") as http:
            for i in range(25):
                statuses[sign_up(http, server.base, f"away{i}").status_code] += 1
        item.check(
            statuses == Counter({201: 20, 429: 5}),
            f"25 sign-ups from one address: {statuses[201]} accepted, {statuses[429]} refused "
            f"(limit 20/hour)",
        )
        statuses.clear()
        with client("127.0.0.101") as http:
            for i in range(45):
                wrong = {"username": "away0", "password": f"guess{i}"}
                statuses[post_json(http, f"{server.base}/api/auth/token/", wrong).status_code] += 1
        item.check(
            statuses[401] == 20 and statuses[429] == 25,
            f"45 wrong passwords from one address: {statuses[401]} checked, "
            f"{statuses[429]} refused (limit 20/hour per name and address)",
        )
        said = log.read_text(errors="replace").count("rate limits counted per server process")
        item.check(said == 1, f"the log says the limits are per process: {said} time(s)")
    finally:
        server.stop()


# --- 25.4. Floods of heavy work, and a bystander -----------------------------------------

BYSTANDER_READ_EVERY = 0.1
BYSTANDER_SUBMIT_EVERY = 0.6
FLOOD_CAP_SECONDS = 120.0
REPLAY_GAMES = 4  # also the shared flood's: one for the flood, three for the bystander
REPLAY_ACTIONS = 20_000


@dataclass
class Latencies:
    reads: list[float] = field(default_factory=list)
    submissions: list[float] = field(default_factory=list)
    failed: Counter[str] = field(default_factory=Counter)

    @staticmethod
    def summary(values: list[float]) -> str:
        if not values:
            return "none"
        ordered = sorted(values)
        p50 = ordered[len(ordered) // 2]
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        return (f"{len(values)}: p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, "
                f"max {ordered[-1] * 1000:.0f} ms")  # fmt: skip

    @staticmethod
    def p99(values: list[float]) -> float:
        ordered = sorted(values) or [float("inf")]
        return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


async def _bystander(base: str, token: str, stop: asyncio.Event, seen: Latencies) -> None:
    """Reads every 100 ms and a practice submission every 600 ms, each timed, until `stop`."""
    transport = httpx.AsyncHTTPTransport(local_address="127.0.0.50")
    auth = {"Authorization": f"Token {token}"}
    async with httpx.AsyncClient(timeout=TIMEOUT, transport=transport) as http:

        async def timed_call(kind: list[float], call: Any, ok: int) -> None:
            started = time.perf_counter()
            try:
                response = await call
                if response.status_code != ok:
                    seen.failed[f"{response.status_code}"] += 1
            except httpx.HTTPError as error:
                seen.failed[type(error).__name__] += 1
            kind.append(time.perf_counter() - started)

        async def reads() -> None:
            while not stop.is_set():
                await timed_call(seen.reads, http.get(f"{base}/api/daily/"), 200)
                await asyncio.sleep(BYSTANDER_READ_EVERY)

        async def submissions() -> None:
            while not stop.is_set():
                body = {"deal": HINT["deal"], "log": "S W9 S", "practice": True}
                key = {"Idempotency-Key": f"bystander-{uuid.uuid4()}"}
                call = http.post(f"{base}/api/games/", json=body, headers={**auth, **key})
                await timed_call(seen.submissions, call, 201)
                await asyncio.sleep(BYSTANDER_SUBMIT_EVERY)

        await asyncio.gather(reads(), submissions())


Request = tuple[str, str, dict[str, str], Any]  # method, URL, headers, JSON body (or None)


def _flood_sender(requests: list[Request], pipe: Connection) -> None:
    """In a process of its own: say ready, wait for the go, send `requests` at once from
    the flood's address, and send back their statuses (0: no answer) and the time taken.

    Sending 60 requests at once costs their sender CPU too; from the bystander's
    own process it would be counted in the bystander's times.
    """

    async def send() -> tuple[Counter[int], float]:
        transport = httpx.AsyncHTTPTransport(local_address="127.0.0.60")
        async with httpx.AsyncClient(
            timeout=FLOOD_CAP_SECONDS, transport=transport,
            limits=httpx.Limits(max_connections=100),
        ) as http:  # fmt: skip
            pipe.send("ready")
            pipe.recv()
            started = time.perf_counter()
            responses = await asyncio.gather(
                *(
                    http.request(method, url, headers=headers, json=body)
                    for method, url, headers, body in requests
                ),
                return_exceptions=True,
            )
            took = time.perf_counter() - started
        statuses = Counter(r.status_code if isinstance(r, httpx.Response) else 0 for r in responses)
        return statuses, took

    pipe.send(asyncio.run(send()))


async def _flood_with_bystander(
    base: str, token: str, requests: list[Request]
) -> tuple[Counter[int], float, Latencies, Latencies]:
    """The bystander alone for 5 s, then during the flood (sent by another process);
    the flood's statuses and time."""
    quiet, during = Latencies(), Latencies()
    ours, theirs = multiprocessing.get_context("spawn").Pipe()
    sender = multiprocessing.get_context("spawn").Process(
        target=_flood_sender, args=(requests, theirs), daemon=True
    )
    sender.start()
    loop = asyncio.get_running_loop()
    assert await loop.run_in_executor(None, ours.recv) == "ready"
    stop = asyncio.Event()
    watcher = asyncio.create_task(_bystander(base, token, stop, quiet))
    await asyncio.sleep(5)
    stop.set()
    await watcher
    stop = asyncio.Event()
    watcher = asyncio.create_task(_bystander(base, token, stop, during))
    ours.send("go")
    statuses, took = await loop.run_in_executor(None, ours.recv)
    stop.set()
    await watcher
    sender.join(timeout=10)
    return statuses, took, quiet, during


def _flood_server(env: dict[str, str], tmp: str, name: str) -> load.Server:
    server = load.Server({**env, "BENCH_SERVER_LOG": f"{tmp}/server-{name}.log",
                          # Production's hint work, not the cheap hints of item 2.
                          "HINT_SOLVER_SECONDS": "10"})  # fmt: skip
    server.start()
    return server


def _judge(item: Item, quiet: Latencies, during: Latencies) -> None:
    item.lines.append(f"        bystander alone, reads {Latencies.summary(quiet.reads)}; "
                      f"submissions {Latencies.summary(quiet.submissions)}")  # fmt: skip
    for label, values in (("reads", during.reads), ("submissions", during.submissions)):
        item.check(
            Latencies.p99(values) < 0.1,
            f"bystander's {label} during the flood: {Latencies.summary(values)}",
        )
    item.check(not during.failed, f"bystander's failed requests: {dict(during.failed) or 0}")


def _flood(item: Item, base: str, token: str, what: str, requests: list[Request]) -> None:
    """Send the flood's `requests` at once, with the bystander watching, and judge."""
    fresh_window(FLOOD_CAP_SECONDS / 2)
    statuses, took, quiet, during = asyncio.run(_flood_with_bystander(base, token, requests))
    item.lines.append(f"        load average {os.getloadavg()[0]:.1f}")
    item.check(statuses[0] == 0, f"{what}: {dict(sorted(statuses.items()))} in {took:.1f} s")
    _judge(item, quiet, during)


def hint_flood(bench: Bench, env: dict[str, str], tmp: str) -> None:
    item = bench.item("25.4", "a hint flood leaves a bystander's read and submission fast")
    server = _flood_server(env, tmp, "hints")
    try:
        token = _a_token(Bench([server.base], [], bench.day), "hint-bystander")
        hint: Request = ("POST", f"{server.base}/api/hint/", {}, HINT)
        _flood(item, server.base, token, "30 parallel anonymous hints from one address",
               [hint] * 30)  # fmt: skip
    finally:
        server.stop()


def _long_games(base: str, token: str) -> list[int]:
    """REPLAY_GAMES games of REPLAY_ACTIONS legal actions (practice: public at once)."""
    ids = []
    deal = rules.Deal(7)
    with client("127.0.0.70") as http:
        for seed in range(1, REPLAY_GAMES + 1):
            log = random_log(deal, REPLAY_ACTIONS, random.Random(seed))
            response = post_json(http, f"{base}/api/games/",
                                 {"deal": deal.code, "log": log, "practice": True},
                                 Authorization=f"Token {token}")  # fmt: skip
            assert response.status_code == 201, response.text[:300]
            ids.append(int(response.json()["id"]))
    return ids


def replay_flood(bench: Bench, env: dict[str, str], tmp: str) -> None:
    item = bench.item("25.4", "a replay flood leaves a bystander's read and submission fast")
    server = _flood_server(env, tmp, "replays")
    try:
        token = _a_token(Bench([server.base], [], bench.day), "replay-bystander")
        games = _long_games(server.base, _a_token(Bench([server.base], [], bench.day), "long"))
        replay = [f"{server.base}/api/games/{games[i % len(games)]}/replay/" for i in range(60)]
        _flood(item, server.base, token,
               f"60 parallel replays of {len(games)} {REPLAY_ACTIONS:,}-action games from one "
               "address",
               [("GET", url, {"Accept-Encoding": "gzip"}, None) for url in replay])  # fmt: skip
    finally:
        server.stop()


# --- Heavy work shared: eight accounts on one address, a bystander on another -------------

SHARED_ACCOUNTS = 8
SHARED_SECONDS = 20.0
BYSTANDER_ASKS = 3  # hints and replays the bystander asks for during the flood
# Positions of the hint's deal, so that not every hint is the same table.
HINT_LOGS = ("", "S", "S W9", "S W9 S")


def _shared_flooder(
    base: str, tokens: list[str], games: list[int], seconds: float, pipe: Connection
) -> None:
    """In a process of its own: each account asks for hints, replays and share
    pictures, one after another, from the flood's address for `seconds`; sends back
    the statuses per kind of request."""

    async def account(http: httpx.AsyncClient, number: int, token: str,
                      statuses: Counter[str], until: float) -> None:  # fmt: skip
        auth = {"Authorization": f"Token {token}"}
        turn = 0
        while time.monotonic() < until:
            body = {"deal": HINT["deal"], "log": HINT_LOGS[(number + turn) % len(HINT_LOGS)]}
            asks = [
                ("hint", http.post(f"{base}/api/hint/", json=body, headers=auth)),
                ("replay", http.get(f"{base}/api/games/{games[turn % len(games)]}/replay/",
                                    headers={**auth, "Accept-Encoding": "gzip"})),
                ("card", http.get(f"{base}/cards/games/{games[turn % len(games)]}.png?{turn}",
                                  headers=auth)),
            ]  # fmt: skip
            for kind, call in asks:
                try:
                    response = await call
                    statuses[f"{kind} {response.status_code}"] += 1
                except httpx.HTTPError as error:
                    statuses[f"{kind} {type(error).__name__}"] += 1
            turn += 1

    async def send() -> Counter[str]:
        transport = httpx.AsyncHTTPTransport(local_address="127.0.0.60")
        statuses: Counter[str] = Counter()
        async with httpx.AsyncClient(timeout=FLOOD_CAP_SECONDS, transport=transport) as http:
            pipe.send("ready")
            pipe.recv()
            until = time.monotonic() + seconds
            await asyncio.gather(*(account(http, number, token, statuses, until)
                                   for number, token in enumerate(tokens)))  # fmt: skip
        return statuses

    pipe.send(asyncio.run(send()))


async def _bystander_asks(
    base: str, token: str, games: list[int], times: dict[str, list[float]],
    failed: Counter[str],
) -> None:  # fmt: skip
    """From the bystander's address: a hint, then a replay of a game not built yet,
    every few seconds of the flood, each timed."""
    transport = httpx.AsyncHTTPTransport(local_address="127.0.0.50")
    auth = {"Authorization": f"Token {token}"}
    async with httpx.AsyncClient(timeout=FLOOD_CAP_SECONDS, transport=transport) as http:
        for turn in range(BYSTANDER_ASKS):
            await asyncio.sleep(SHARED_SECONDS / (BYSTANDER_ASKS + 1))
            body = {"deal": HINT["deal"], "log": HINT_LOGS[turn % len(HINT_LOGS)]}
            asks = [
                ("hint", http.post(f"{base}/api/hint/", json=body, headers=auth)),
                ("replay", http.get(f"{base}/api/games/{games[turn]}/replay/", headers=auth)),
            ]
            for kind, call in asks:
                started = time.perf_counter()
                response = await call
                times[kind].append(time.perf_counter() - started)
                if response.status_code != 200:
                    failed[f"{kind} {response.status_code}"] += 1


async def _shared_flood_with_bystander(
    base: str, tokens: list[str], flood_games: list[int], bystander: str, own_games: list[int]
) -> tuple[Counter[str], Latencies, Latencies, dict[str, list[float]], Counter[str]]:
    quiet, during = Latencies(), Latencies()
    times: dict[str, list[float]] = {"hint": [], "replay": []}
    failed: Counter[str] = Counter()
    ours, theirs = multiprocessing.get_context("spawn").Pipe()
    sender = multiprocessing.get_context("spawn").Process(
        target=_shared_flooder, args=(base, tokens, flood_games, SHARED_SECONDS, theirs),
        daemon=True,
    )  # fmt: skip
    sender.start()
    loop = asyncio.get_running_loop()
    assert await loop.run_in_executor(None, ours.recv) == "ready"
    stop = asyncio.Event()
    watcher = asyncio.create_task(_bystander(base, bystander, stop, quiet))
    await asyncio.sleep(5)
    stop.set()
    await watcher
    stop = asyncio.Event()
    watcher = asyncio.create_task(_bystander(base, bystander, stop, during))
    ours.send("go")
    await _bystander_asks(base, bystander, own_games, times, failed)
    statuses = await loop.run_in_executor(None, ours.recv)
    stop.set()
    await watcher
    sender.join(timeout=10)
    return statuses, quiet, during, times, failed


def shared_flood(bench: Bench, env: dict[str, str], tmp: str) -> None:
    item = bench.item(
        "heavy",
        f"{SHARED_ACCOUNTS} accounts on one address flooding hints, replays and pictures: "
        "a bystander on another address still gets its hints, replays and pages",
    )
    server = _flood_server(env, tmp, "shared")
    try:
        one = Bench([server.base], [], bench.day)
        tokens = [_a_token(one, f"flooder{n}") for n in range(SHARED_ACCOUNTS)]
        bystander = _a_token(one, "shared-bystander")
        games = _long_games(server.base, _a_token(one, "shared-long"))
        flood_games, own_games = games[:1], games[1 : 1 + BYSTANDER_ASKS]
        fresh_window(SHARED_SECONDS + 10)
        statuses, quiet, during, times, failed = asyncio.run(
            _shared_flood_with_bystander(server.base, tokens, flood_games, bystander, own_games)
        )
        item.lines.append(f"        load average {os.getloadavg()[0]:.1f}")
        item.lines.append(f"        the flood's answers in {SHARED_SECONDS:.0f} s: "
                          f"{dict(sorted(statuses.items()))}")  # fmt: skip
        for kind in ("hint", "replay"):
            took = ", ".join(f"{seconds:.1f}" for seconds in times[kind])
            refused = sum(count for what, count in failed.items() if what.startswith(kind))
            item.check(
                len(times[kind]) == BYSTANDER_ASKS and not refused,
                f"bystander's {kind}s answered: {len(times[kind]) - refused} of "
                f"{BYSTANDER_ASKS}, in {took} s ({dict(failed) or 'none refused'})",
            )
        item.lines.append(f"        bystander alone, reads {Latencies.summary(quiet.reads)}; "
                          f"submissions {Latencies.summary(quiet.submissions)}")  # fmt: skip
        item.check(
            Latencies.p99(during.reads) < 0.1,
            f"bystander's reads during the flood: {Latencies.summary(during.reads)}",
        )
        # Shown, not judged here: the hint and replay floods' items judge submissions.
        item.lines.append(f"        bystander's submissions during the flood: "
                          f"{Latencies.summary(during.submissions)}")  # fmt: skip
        item.check(not during.failed, f"bystander's failed requests: {dict(during.failed) or 0}")
    finally:
        server.stop()


# --- Running ----------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="easyharp-abuse-") as tmp:
        env = server_env(Path(tmp) / "db.sqlite3", args.redis_url, args.database_url)
        today = datetime.datetime.now(datetime.UTC).date().isoformat()
        empty = ["flush", "--noinput"] if args.database_url else ["check"]
        if args.database_url:
            ensure_database(args.database_url)
        for command in (["migrate", "--noinput"], empty,
                        ["prepare_daily_deals", "--start", today, "--days", "1"]):  # fmt: skip
            subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env,
                           check=True, capture_output=True, timeout=180)  # fmt: skip
        if args.redis_url:
            import redis

            redis.Redis.from_url(args.redis_url).flushdb()
        servers = []
        for number in range(args.servers):
            server = load.Server({**env, "BENCH_SERVER_LOG": f"{tmp}/server-{number}.log"})
            servers.append(server)
        try:
            for server in servers:
                server.start()
            bench = Bench([s.base for s in servers], [s.log for s in servers], today)
            print(f"uvicorn x{len(servers)} on {', '.join(bench.bases)} "
                  f"({'Redis' if args.redis_url else 'in-memory cache'}); "
                  f"ready in {time.monotonic() - started:.1f} s")  # fmt: skip
            steps: list[Callable[[], None]] = [
                lambda: accounts_and_guesses(bench),
                lambda: parallel_burst(bench),
                lambda: bodies(bench, _a_token(bench, "uploader")),
                lambda: sockets(bench),
                lambda: headers_and_methods(bench),
                lambda: unprepared_day(bench),
                lambda: lookalike_names(bench),
                lambda: host_variants(bench, args.redis_url),
                lambda: no_lockout(bench),
                lambda: far_dates(bench, _a_token(bench, "far-dates")),
                lambda: redis_away(bench, env, Path(tmp) / "server-redis-away.log"),
            ]
            floods: list[Callable[[], None]] = [
                lambda: hint_flood(bench, env, tmp),
                lambda: replay_flood(bench, env, tmp),
            ]
            shared: list[Callable[[], None]] = [lambda: shared_flood(bench, env, tmp)]
            steps = {"all": steps + floods + shared, "floods": floods, "limits": steps,
                     "shared": shared}[args.only]  # fmt: skip
            for step in steps:
                if time.monotonic() - started > args.deadline:
                    bench.item("-", "stopped at the deadline").check(False, f"{args.deadline} s")
                    break
                step()
        finally:
            for server in servers:
                server.stop()
    return report(bench, time.monotonic() - started)


def _a_token(bench: Bench, name: str) -> str:
    with client("127.0.0.201") as http:
        response = sign_up(http, bench.base, name)
    return str(response.json()["token"])


def report(bench: Bench, seconds: float) -> int:
    for item in bench.items:
        print(f"\n[{item.number}] {item.title}: {'HELD' if item.held else 'DID NOT HOLD'}")
        for line in item.lines:
            print(f"    {line}")
    failed = [item.number for item in bench.items if not item.held]
    print(f"\n{len(bench.items) - len(failed)} of {len(bench.items)} items held in {seconds:.0f} s"
          + (f"; not held: {', '.join(failed)}" if failed else ""))  # fmt: skip
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", help="share limits through this Redis db (flushed)")
    parser.add_argument("--servers", type=int, default=1, help="server processes (2 needs Redis)")
    parser.add_argument("--deadline", type=float, default=420.0, help="stop after this many s")
    parser.add_argument("--database-url", help="a PostgreSQL database to use (emptied)")
    parser.add_argument("--only", choices=["all", "limits", "floods", "shared"],
                        default="all",
                        help="the limits' items, the floods, the shared flood, or all")  # fmt: skip
    args = parser.parse_args()
    if args.servers > 1 and not args.redis_url:
        parser.error("--servers above 1 needs --redis-url (the processes share limits there)")
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
