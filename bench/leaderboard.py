"""Benchmark of the leaderboards: one day with 1,000,000 games on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/eh_bench \
        .venv/bin/python bench/leaderboard.py [--games 1000000] [--players 1000000] [--repeat 200]

It fills one day of a dedicated database (created if missing, migrated, and
emptied first) with `--games` games by `--players` players, written with COPY
through psycopg: the players, the games (each player's first game of the day
is their ranked game, with a duration; the rest are practice), each player's
entry on each board (their ranked game, with the service's own sort key) and
the stored player counts. Scores, moves and wins are spread like real play
(about one game in eight won), with many ties on score and moves, broken by
the duration (whole seconds, so that ties remain). Then it times, through the
same selectors the API uses:

- the top page (100 entries) of each board;
- around-me (100 entries centred on the player, with the player's rank) for a
  player 10 places from the bottom of each board;
- around-me for the player in the middle of the score board (whose rank adds
  the bucket counts before it to a count inside its own bucket).

Each is run `--repeat` times after one warm-up; it prints median, 95th
percentile and maximum in milliseconds. `--skip-fill` times an earlier fill again.
"""

from __future__ import annotations

import argparse
import datetime
import os
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/eh_bench")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "easyharp_site.settings")

from bench.databases import admin_connection, ensure_database  # noqa: E402,F401

DAY = datetime.date(2026, 1, 15)
DEAL_NUMBER = 4


def fake_game(rng: random.Random) -> tuple[int, int, bool, int]:
    """(score, moves, won, duration ms) spread like real play."""
    duration_ms = 1000 * rng.randint(120, 3600)
    if rng.random() < 0.125:
        return 1220 + 5 * rng.randint(0, 40), rng.randint(300, 1500), True, duration_ms
    return 5 * rng.randint(0, 220), rng.randint(20, 2500), False, duration_ms


def fill(*, games: int, players: int, seed: int) -> None:
    """Empty the tables and write one day of games with COPY."""
    from django.db import connection

    from leaderboards.models import board_sort_key

    rng = random.Random(seed)
    start = datetime.datetime.combine(DAY, datetime.time.min, tzinfo=datetime.UTC)
    connection.ensure_connection()
    raw = connection.connection  # the psycopg connection under Django's wrapper
    with raw.cursor() as cursor:
        cursor.execute(
            "TRUNCATE leaderboards_boardentry, leaderboards_boardtotal, leaderboards_boardbucket, "
            "leaderboards_boardcountchange, "
            "games_moderationaction, games_attempt, games_game, "
            "games_dailydeal, authtoken_token, auth_user RESTART IDENTITY CASCADE"
        )
        cursor.execute(
            "INSERT INTO games_dailydeal (date, number, par_log, created_at) "
            "VALUES (%s, %s, '', now())",
            [DAY, DEAL_NUMBER],
        )
        daily_id = cursor.execute("SELECT id FROM games_dailydeal").fetchone()[0]

        t = time.perf_counter()
        with cursor.copy(
            "COPY auth_user (id, password, is_superuser, username, first_name, last_name, "
            "email, is_staff, is_active, date_joined) FROM STDIN"
        ) as copy:
            for pid in range(1, players + 1):
                copy.write_row((pid, "!", False, f"player{pid}", "", "", "", False, True, start))
        print(f"  {players:,} players in {time.perf_counter() - t:.1f} s", flush=True)

        # Games in submission order; each player's first one is ranked, and is
        # their entry on the boards it counts on.
        t = time.perf_counter()
        ranked: dict[str, dict[int, tuple[Any, ...]]] = {"score": {}, "moves": {}}
        played: set[int] = set()
        seconds = 86_399.0 / games
        with cursor.copy(
            "COPY games_game (id, player_id, deal_number, log, score, moves, won, actions, "
            "rules_version, daily_id, created_at, void_reason, request_digest, ranked, "
            "assisted, duration_ms, review, review_flags, review_state) FROM STDIN"
        ) as copy:
            for gid in range(1, games + 1):
                # Every player plays at least once, then the rest at random.
                pid = gid if gid <= players else rng.randint(1, players)
                score, moves, won, duration_ms = fake_game(rng)
                at = start + datetime.timedelta(seconds=gid * seconds)
                first = pid not in played
                played.add(pid)
                # The boards never read the log; a stand-in keeps the table small.
                copy.write_row(
                    (
                        gid,
                        pid,
                        DEAL_NUMBER,
                        "S",
                        score,
                        moves,
                        won,
                        moves,
                        "EH1",
                        daily_id,
                        at,
                        "",
                        "",
                        first,
                        False,
                        duration_ms if first else None,
                        "{}",
                        "",
                        "",
                    )
                )
                if not first:
                    continue
                for board in ("score", "moves"):
                    if board == "moves" and not won:
                        continue
                    key1, key2 = board_sort_key(board=board, score=score, moves=moves, won=won)
                    ranked[board][pid] = (key1, key2, duration_ms, at, gid, score, moves, won)
        print(f"  {games:,} games in {time.perf_counter() - t:.1f} s", flush=True)

        t = time.perf_counter()
        with cursor.copy(
            "COPY leaderboards_boardentry (date, board, player_id, game_id, key1, key2, "
            "duration_ms, submitted_at, score, moves, won) FROM STDIN"
        ) as copy:
            for board, entries in ranked.items():
                for pid, (key1, key2, ms, at, gid, score, moves, won) in entries.items():
                    copy.write_row((DAY, board, pid, gid, key1, key2, ms, at, score, moves, won))
        for board, entries in ranked.items():
            cursor.execute(
                "INSERT INTO leaderboards_boardtotal (date, board, players) VALUES (%s, %s, %s)",
                [DAY, board, len(entries)],
            )
            buckets = Counter(key1 for key1, *_ in entries.values())
            with cursor.copy(
                "COPY leaderboards_boardbucket (date, board, key1, players) FROM STDIN"
            ) as copy:
                for key1, players_in_bucket in buckets.items():
                    copy.write_row((DAY, board, key1, players_in_bucket))
        entries_count = sum(len(e) for e in ranked.values())
        print(f"  {entries_count:,} board entries in {time.perf_counter() - t:.1f} s", flush=True)
        for sequence, table in (
            ("auth_user_id_seq", "auth_user"),
            ("games_game_id_seq", "games_game"),
        ):
            cursor.execute(f"SELECT setval('{sequence}', (SELECT max(id) FROM {table}))")
    raw.commit()
    # Fresh statistics and visibility map, as autovacuum keeps them on a live server.
    t = time.perf_counter()
    raw.autocommit = True
    with raw.cursor() as cursor:
        cursor.execute(
            "VACUUM ANALYZE leaderboards_boardentry, leaderboards_boardtotal, "
            "leaderboards_boardbucket, auth_user"
        )
    raw.autocommit = False
    print(f"  vacuum analyze in {time.perf_counter() - t:.1f} s", flush=True)


def server_ms(call: Callable[[], Any]) -> float:
    """PostgreSQL's own planning + execution time of the statements `call` runs (ms)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        call()
    total = 0.0
    with connection.cursor() as cursor:
        for query in captured.captured_queries:
            cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {query['sql']}")
            plan = cursor.fetchone()[0]
            plan = plan[0] if isinstance(plan, list) else plan
            total += plan.get("Planning Time", 0.0) + plan.get("Execution Time", 0.0)
    return total


def timed(label: str, repeat: int, call: Callable[[], Any]) -> float:
    """Run `call` once to warm up, then `repeat` times; print and return the median (ms).

    Besides the wall clock, it prints this process's CPU time per call and the
    database's own time (EXPLAIN ANALYZE of the same statements), which do not
    grow when other work competes for the cores.
    """
    call()
    samples = []
    cpu = time.process_time()
    for _ in range(repeat):
        t = time.perf_counter()
        call()
        samples.append((time.perf_counter() - t) * 1000)
    cpu_ms = (time.process_time() - cpu) * 1000 / repeat
    samples.sort()
    median = statistics.median(samples)
    p95 = samples[min(len(samples) - 1, int(len(samples) * 0.95))]
    print(
        f"  {label:<46} median {median:6.2f} ms  p95 {p95:6.2f} ms  max {samples[-1]:6.2f} ms"
        f"  | client CPU {cpu_ms:5.2f} ms  database {server_ms(call):5.2f} ms",
        flush=True,
    )
    return median


def measure(repeat: int) -> None:
    from django.contrib.auth import get_user_model

    from leaderboards.models import BoardEntry
    from leaderboards.selectors import leaderboard_around, leaderboard_page, leaderboard_total

    users = get_user_model().objects
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Timings ({repeat} runs each, after one warm-up; load average {load}):")
    for order in ("score", "moves"):
        total = leaderboard_total(date=DAY, order=order)
        timed(
            f"{order} board, top 100 of {total:,}",
            repeat,
            lambda order=order: leaderboard_page(date=DAY, order=order, limit=100),
        )
        entries = BoardEntry.objects.filter(date=DAY, board=order).order_by(
            "-key1", "-key2", "-duration_ms", "-submitted_at", "-game_id"
        )
        near_bottom = users.get(pk=entries.values_list("player_id", flat=True)[9])
        page = leaderboard_around(date=DAY, order=order, player=near_bottom, limit=100)
        assert page is not None and page["me"]["rank"] == total - 9, page and page["me"]
        timed(
            f"{order} board, around-me at rank {total - 9:,}",
            repeat,
            lambda order=order, p=near_bottom: leaderboard_around(
                date=DAY, order=order, player=p, limit=100
            ),
        )
    total = leaderboard_total(date=DAY, order="score")
    middle_id = (
        BoardEntry.objects.filter(date=DAY, board="score")
        .order_by("key1", "key2", "duration_ms", "submitted_at", "game_id")
        .values_list("player_id", flat=True)[total // 2]
    )
    middle = users.get(pk=middle_id)
    page = leaderboard_around(date=DAY, order="score", player=middle, limit=100)
    assert page is not None and page["me"]["rank"] == total // 2 + 1, page and page["me"]
    timed(
        f"score board, around-me at rank {total // 2 + 1:,} (middle)",
        repeat,
        lambda: leaderboard_around(date=DAY, order="score", player=middle, limit=100),
    )


def bench_parser(description: str, *, repeat: int = 200) -> argparse.ArgumentParser:
    """The options every database bench takes: --repeat, --seed and --skip-fill."""
    parser = argparse.ArgumentParser(description=description.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=repeat)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--skip-fill", action="store_true", help="time the data already there")
    return parser


def django_migrated() -> None:
    """Set Django up on the bench's database ($DATABASE_URL), created and migrated."""
    ensure_database(os.environ["DATABASE_URL"])
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def prepare(
    description: str,
    *more: Callable[..., None],
    options: Callable[[argparse.ArgumentParser], None] | None = None,
) -> argparse.Namespace:
    """Read the command line (a bench's own `options` added), set up Django on a
    migrated database and, unless `--skip-fill`, fill the day, then run each of
    `more(players=, seed=)`."""
    parser = bench_parser(description)
    if options is not None:
        options(parser)
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--players", type=int, default=1_000_000)
    args = parser.parse_args()
    if args.players > args.games:
        parser.error("--players cannot exceed --games")

    django_migrated()
    from django.db import connection

    if not args.skip_fill:
        print(f"Filling {DAY} with {args.games:,} games by {args.players:,} players (COPY):")
        t = time.perf_counter()
        fill(games=args.games, players=args.players, seed=args.seed)
        for step in more:
            step(players=args.players, seed=args.seed)
        print(f"  filled in {time.perf_counter() - t:.1f} s")
        # The fills leave their raw connection out of autocommit: start afresh.
        connection.close()
    return args


def main() -> None:
    measure(prepare(__doc__).repeat)


if __name__ == "__main__":
    main()
