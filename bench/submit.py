"""Benchmark of game submission: validated, ranked submissions per second vs a bare endpoint.

    .venv/bin/python bench/submit.py [--seconds 20] [--rounds 2] [--concurrency 16]

It runs the real ASGI server (uvicorn as in production, one process, on a free loopback port)
with benchmark settings (`bench/settings_submit.py`) that add
`POST /bench/bare-games/`: the same authentication, body parsing and stored
row as `POST /api/games/`, without replaying the log, ranking or anything else
(`bench/bare.py`). Then, in the same run, it alternates timed phases of the two
endpoints (bare, validated, bare, validated, ...) with the same clients and
realistic logs: random legal play of today's deal, 400 to 800 actions each
(stock taps and recycles, moves, runs, foundations, cards taken back, undos),
made with the rules engine beforehand, each with its per-action times.

Every player starts with an open ranked attempt of today (started an hour
before), and each validated submission comes from a player who has not
submitted yet: it is that player's ranked game, so it closes the attempt,
checks the times against the server's clock, computes the review signals and
goes on the boards. (Should the players run out, later submissions are
practice; the end report counts both.) The bare phases use random players.

It prints accepted (201) submissions per second and latencies for each
endpoint, the ratio validated / bare over the whole run and the median of the
ratios of each round's two neighbouring phases (steadier when other work
comes and goes on the machine), and the server process's CPU time per accepted
submission of each endpoint (and of the server's PostgreSQL processes). Target: at
least 0.6. At the end it runs the copy check of the ranked games, as the job
worker does after the answers, and prints its cost per game.

Needs PostgreSQL (DATABASE_URL, default a database `eh_service_benchsubmit`
that it creates and empties) and uses Redis for the live-board hook when
REDIS_URL is set (default redis://127.0.0.1:6379/1), as in production.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import itertools
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BENCH_ENV = {
    "DJANGO_SETTINGS_MODULE": "bench.settings_submit",
    "DEBUG": "false",
    "SECRET_KEY": "benchmark-only-secret-key-not-for-production",
    "DAILY_DEAL_SALT": "benchmark-only-salt",
    # The solver is not what is measured; the day is chosen at once.
    "DAILY_DEAL_REQUIRE_WIN": "false",
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "SECURE_SSL_REDIRECT": "false",
    "SECURE_COOKIES": "false",
    "SECURE_HSTS_SECONDS": "0",
    "LOG_LEVEL": "WARNING",
    # The clients stand for different players, all on loopback: none is held to
    # one address's fair share (easyharp_site.fairness).
    "REQUEST_CONCURRENCY_PER_ADDRESS": "100000",
}
os.environ.update(BENCH_ENV)
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/eh_service_benchsubmit")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/1")

import httpx  # noqa: E402

from bench.databases import ensure_database  # noqa: E402
from bench.engine import random_log  # noqa: E402
from bench.server import uvicorn_command  # noqa: E402

ENDPOINTS = {"bare": "/bench/bare-games/", "validated": "/api/games/"}


# Spacing of the per-action times sent with each log (the attempts began an
# hour before, so every time is within the server's measure).
TIME_STEP_MS = 450


def prepare(players: int, logs: int, seed: int) -> tuple[str, list[str], list[dict[str, Any]]]:
    """Empty the database, create players with tokens and open attempts of today.

    Returns (deal, tokens, bodies): the request bodies hold a log and its times.
    """
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone
    from rest_framework.authtoken.models import Token

    from games import rules
    from games.models import Attempt
    from games.services import daily_deal_store

    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE leaderboards_boardentry, leaderboards_boardtotal, leaderboards_boardbucket, "
            "leaderboards_boardcountchange, "
            "games_moderationaction, games_attempt, games_game, games_dailydeal, "
            "authtoken_token, auth_user RESTART IDENTITY CASCADE"
        )
    users = get_user_model().objects.bulk_create(
        [get_user_model()(username=f"bench{i}", password="!") for i in range(players)],
        batch_size=2_000,
    )
    tokens = Token.objects.bulk_create(
        [Token(key=Token.generate_key(), user=user) for user in users], batch_size=2_000
    )
    day = daily_deal_store(date=timezone.now().date())
    an_hour_ago = timezone.now() - datetime.timedelta(hours=1)
    Attempt.objects.bulk_create(
        [Attempt(player=user, daily=day, started_at=an_hour_ago) for user in users],
        batch_size=2_000,
    )
    deal = rules.Deal(day.number)
    rng = random.Random(seed)
    bodies = []
    for _ in range(logs):
        log = random_log(deal, rng.randint(400, 800), rng)
        times = [TIME_STEP_MS * (index + 1) for index in range(len(log.split()))]
        bodies.append({"deal": deal.code, "log": log, "times": times})
    connection.close()
    return deal.code, [token.key for token in tokens], bodies


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def database_cpu_seconds() -> float:
    """CPU seconds so far of every PostgreSQL process on this machine (its backends
    come and go with the server's connections; a backend that exits takes its time
    with it, so this is a lower bound when connections are not pooled)."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        if "(postgres)" in text:
            fields = text.rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(
        uvicorn_command(port),
        cwd=ROOT,
        env=os.environ.copy(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        if server.poll() is not None:
            sys.exit(f"the server exited: {server.stderr.read().decode() if server.stderr else ''}")
        time.sleep(0.3)
    server.kill()
    sys.exit("the server did not answer /healthz within 60 s")


async def phase(
    base: str,
    path: str,
    players: Iterator[str],
    bodies: Iterator[dict[str, Any]],
    seconds: float,
    concurrency: int,
) -> tuple[int, int, list[float], float]:
    """Send submissions for `seconds`, each from the next of `players` with the next of
    `bodies`; returns (accepted, refused, latencies ms, elapsed s)."""
    accepted = refused = 0
    latencies: list[float] = []
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=60) as client:
        stop = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal accepted, refused
            while time.perf_counter() < stop:
                headers = {"Authorization": f"Token {next(players)}"}
                body = next(bodies)
                t = time.perf_counter()
                response = await client.post(path, json=body, headers=headers)
                latencies.append((time.perf_counter() - t) * 1000)
                if response.status_code == 201:
                    accepted += 1
                else:
                    refused += 1
                    if refused <= 3:
                        print(f"    refused: {response.status_code} {response.text[:200]}")

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - start
    return accepted, refused, latencies, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each phase")
    parser.add_argument("--rounds", type=int, default=2, help="bare+validated pairs")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--players", type=int, default=8_000, help="players, each with an open attempt"
    )
    parser.add_argument(
        "--logs", type=int, default=1_000, help="distinct logs: more than the ranked games sent"
    )
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()

    ensure_database(os.environ["DATABASE_URL"])
    print("Preparing players and their attempts, today's deal and logs...", flush=True)
    deal, tokens, bodies = prepare(args.players, args.logs, args.seed)
    lengths = [len(body["log"].split()) for body in bodies]
    print(
        f"  deal {deal}; {len(bodies)} logs of {min(lengths)}-{max(lengths)} actions "
        f"(mean {statistics.mean(lengths):.0f}) with their times; "
        f"{len(tokens)} players with an open attempt"
    )
    # Validated phases take each player once (their ranked game), bare ones at random.
    unplayed = itertools.cycle(tokens)
    rng = random.Random(args.seed)
    anyone = iter(lambda: rng.choice(tokens), None)
    # Each ranked game plays its own log, as independent players do (a log sent twice
    # is rightly flagged a copy, and pays for the comparison); bare phases at random.
    fresh_logs = itertools.cycle(bodies)
    any_log = iter(lambda: rng.choice(bodies), None)

    port = free_port()
    server = start_server(port)
    base = f"http://127.0.0.1:{port}"
    totals: dict[str, list[float]] = {"bare": [0, 0, 0.0], "validated": [0, 0, 0.0]}
    latencies: dict[str, list[float]] = {"bare": [], "validated": []}
    cpu: dict[str, float] = {"bare": 0.0, "validated": 0.0}
    database_cpu: dict[str, float] = {"bare": 0.0, "validated": 0.0}
    round_ratios: list[float] = []
    try:
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(
            f"uvicorn on {base}; {args.rounds} rounds of {args.seconds:.0f} s per endpoint, "
            f"{args.concurrency} concurrent clients; load average {load}",
            flush=True,
        )
        for round_number in range(args.rounds):
            round_rates = {}
            for name, path in ENDPOINTS.items():
                cpu_before = process_cpu_seconds(server.pid)
                database_before = database_cpu_seconds()
                accepted, refused, lat, elapsed = asyncio.run(
                    phase(
                        base,
                        path,
                        unplayed if name == "validated" else anyone,
                        fresh_logs if name == "validated" else any_log,
                        args.seconds,
                        args.concurrency,
                    )
                )
                cpu[name] += process_cpu_seconds(server.pid) - cpu_before
                database_cpu[name] += database_cpu_seconds() - database_before
                totals[name][0] += accepted
                totals[name][1] += refused
                totals[name][2] += elapsed
                latencies[name].extend(lat)
                round_rates[name] = accepted / elapsed
                print(
                    f"  round {round_number + 1} {name:<9} {accepted / elapsed:8.1f} accepted/s"
                    f"  ({accepted} in {elapsed:.1f} s, {refused} refused)",
                    flush=True,
                )
            round_ratios.append(round_rates["validated"] / round_rates["bare"])
    finally:
        server.terminate()
        server.wait(timeout=30)

    print("Totals:")
    rates = {}
    for name in ENDPOINTS:
        accepted, refused, elapsed = totals[name]
        rates[name] = accepted / elapsed
        lat = sorted(latencies[name])
        p95 = lat[int(len(lat) * 0.95)] if lat else float("nan")
        print(
            f"  {name:<9} {rates[name]:8.1f} accepted/s   median {statistics.median(lat):6.1f} ms"
            f"   p95 {p95:6.1f} ms   refused {int(refused)}"
            f"   server CPU {1000 * cpu[name] / max(accepted, 1):5.1f} ms per submission"
            f" (PostgreSQL {1000 * database_cpu[name] / max(accepted, 1):4.1f} ms)"
        )
    print(
        f"  validated / bare = {rates['validated'] / rates['bare']:.2f} over the run, "
        f"{statistics.median(round_ratios):.2f} median of the rounds "
        f"({', '.join(f'{r:.2f}' for r in round_ratios)})  (target >= 0.6)"
    )
    copies_check()
    report_stored()


def copies_check() -> None:
    """The copy check of the ranked games, as the job worker runs it after the answers
    (`ranking.actions.copies_check`): here, once the phases are over."""
    import datetime

    from django.utils import timezone

    from games.copies import SETTLE_SECONDS
    from ranking.actions import copies_check

    later = timezone.now() + datetime.timedelta(seconds=SETTLE_SECONDS)
    wall, cpu = time.perf_counter(), time.process_time()
    checked = copies_check(now=later)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        f"Copy check (the job, after the phases): {checked} games in {wall:.1f} s, "
        f"{1000 * wall / max(checked, 1):.1f} ms and {1000 * cpu / max(checked, 1):.1f} ms "
        f"of the job's CPU per game"
    )


def report_stored() -> None:
    """What the server stored: validated games on today's boards, bare rows outside them."""
    from django.db.models import Count, Q

    from easyharp_site.dates import today
    from games.models import Game
    from leaderboards.selectors import board_totals

    counts = Game.objects.aggregate(
        ranked_games=Count("id", filter=Q(ranked=True)),
        practice_games=Count("id", filter=Q(daily__isnull=False, ranked=False)),
        flagged_games=Count("id", filter=Q(review_state="flagged")),
        copied_games=Count("id", filter=Q(review_flags__contains="copied")),
        bare_rows=Count("id", filter=Q(daily__isnull=True)),
    )
    totals = board_totals(date=today())
    print(
        f"Stored: {counts['ranked_games']} ranked games (results, duration and review computed "
        f"by the server; {counts['flagged_games']} flagged, {counts['copied_games']} of them as "
        f"copies), {counts['practice_games']} "
        f"practice games, {counts['bare_rows']} bare rows; players on today's boards: {totals}"
    )


if __name__ == "__main__":
    main()
