"""Benchmark of friends, leagues and standings on a 1,000,000-game day, on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/eh_bench \
        .venv/bin/python bench/leagues.py [--games 1000000] [--players 1000000] [--repeat 200]

It fills one day as `bench/leaderboard.py` does (its `fill`: 1,000,000 games,
each player's ranked game on the boards), then adds, with COPY, a league of
1,000 members and a player who follows 1,000 players, both drawn at random
from the whole board, and copies the day's board entries to the HISTORY_DAYS
days before it. A live server's table holds many days, so its planner finds a
player's entry of a day through the unique (date, board, player) index; on a
table of one day it would take the index by player alone, a plan production
never runs. It times, through the selector the API and the sockets use
(`leaderboard_among`), by score and by moves, the top 100 and the viewer's own
entry of:

- the league's board of the day (1,000 members) and
- the friends board of the player following 1,000 players,

each read the two ways every narrowed board is read: from the day's board
mirror in Redis (`leaderboards.mirror`, built first as its job builds it; it
prints the time and the memory that takes) and from the table, one lookup per
player (the read of a day whose mirror is off or not complete). It checks
that both give the same board, and prints the index the database reads the
entries through. Redis is `REDIS_URL` (by default database 14 of the local
server).

Then the standings, for a week of 7 days of `--players` players each: it
settles the filled day (`day_points_settle`: every entry of the day's
score board ranked with its points, in one statement), writes the six other
days of its week from it (each day's places shuffled), and times the job's
ranking of the week (`standings_rank`: one INSERT ... SELECT that sums 7,000,000
day rows and ranks 1,000,000 players), with this process's peak memory (the
job keeps no row in Python) and PostgreSQL's plan of the statement (its sorts
and aggregates spill to disk past `work_mem`, so their memory is bounded
too). Last, it times the reads of the standings: a page of the week's top 100
with the viewer's own place, and the league's standings (1,000 members).

Each read is run `--repeat` times after one warm-up; it prints median, 95th
percentile and maximum in milliseconds. `--skip-fill` times an earlier fill again;
`--skip-standings` times the boards only.
"""

from __future__ import annotations

import argparse
import datetime
import os
import random
import re
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/eh_bench")
# Friends boards read the day's mirror in Redis, as on a server with Redis.
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/14")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "easyharp_site.settings")

from bench.leaderboard import DAY, prepare, server_ms, timed  # noqa: E402

MEMBERS = 1_000
FOLLOWED = 1_000
WEEK_DAYS = 7
HISTORY_DAYS = 2


def probe_index(call: Any) -> str:
    """The index the database reads the audience's board entries through."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        call()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {captured.captured_queries[-1]['sql']}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    names = re.findall(r"Index (?:Only )?Scan using (\S+) on leaderboards_boardentry", plan)
    return ", ".join(sorted(set(names))) or "no index (a sequential scan)"


def board_timed(label: str, repeat: int, call: Any) -> None:
    """`timed`, plus PostgreSQL's best time over 20 runs of the same statements (the
    least disturbed by other work on a shared machine) and the index it probes."""
    timed(label, repeat, call)
    best = min(server_ms(call) for _ in range(20))
    print(
        f"  {'':<46} database, best of 20 runs {best:5.2f} ms; entries read through "
        f"{probe_index(call)}",
        flush=True,
    )


def write_raw(label: str, statements: list[tuple[str, list[Any]]], table: str) -> None:
    """Run `statements` in one transaction on the raw connection, then VACUUM ANALYZE
    `table` (fresh statistics and visibility map, as autovacuum keeps them)."""
    from django.db import connection

    t = time.perf_counter()
    connection.ensure_connection()
    raw = connection.connection
    with raw.cursor() as cursor:
        rows = 0
        for sql, params in statements:
            cursor.execute(sql, params)
            rows += max(cursor.rowcount, 0)
    raw.commit()
    raw.autocommit = True
    with raw.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {table}")
    raw.autocommit = False
    print(f"  {label}: {rows:,} rows in {time.perf_counter() - t:.1f} s", flush=True)


def fill_history(**_: Any) -> None:
    """Copy the day's board entries to each of the HISTORY_DAYS days before it."""
    copy = (
        "INSERT INTO leaderboards_boardentry (date, board, player_id, game_id, key1, key2, "
        "duration_ms, submitted_at, score, moves, won) "
        "SELECT date - %s, board, player_id, game_id, key1, key2, duration_ms, submitted_at, "
        "score, moves, won FROM leaderboards_boardentry WHERE date = %s"
    )
    write_raw(
        f"the day's entries copied to the {HISTORY_DAYS} days before it",
        [(copy, [back, DAY]) for back in range(1, HISTORY_DAYS + 1)],
        "leaderboards_boardentry",
    )


def fill_leagues(*, players: int, seed: int) -> None:
    """A league of MEMBERS random players and one player following FOLLOWED others."""
    from django.db import connection

    rng = random.Random(seed)
    chosen = rng.sample(range(1, players + 1), MEMBERS + FOLLOWED + 1)
    members, followed, follower = chosen[:MEMBERS], chosen[MEMBERS:-1], chosen[-1]
    connection.ensure_connection()
    raw = connection.connection
    with raw.cursor() as cursor:
        cursor.execute(
            "TRUNCATE leagues_league, leagues_membership, leagues_follow, leagues_daypoints, "
            "leagues_settledday, leagues_standing, leagues_standingsperiod RESTART IDENTITY"
        )
        cursor.execute(
            "INSERT INTO leagues_league (slug, name, owner_id, invite_code, members, created_at) "
            "VALUES ('bench', 'Bench', %s, 'bench-code-0123456789abcdef', %s, now())",
            [members[0], MEMBERS],
        )
        with cursor.copy(
            "COPY leagues_membership (league_id, player_id, joined_at) FROM STDIN"
        ) as copy:
            for pid in members:
                copy.write_row((1, pid, datetime.datetime.now(datetime.UTC)))
        with cursor.copy(
            "COPY leagues_follow (follower_id, followee_id, created_at) FROM STDIN"
        ) as copy:
            for pid in followed:
                copy.write_row((follower, pid, datetime.datetime.now(datetime.UTC)))
    raw.commit()
    raw.autocommit = True
    with raw.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE leagues_membership, leagues_follow, leagues_league")
    raw.autocommit = False


def measure_boards(repeat: int) -> None:
    from django.test.utils import override_settings

    from leaderboards.selectors import leaderboard_among
    from leagues.models import Follow, League
    from leagues.selectors import friends_sql, league_members_sql

    build_mirror()
    league = League.objects.get(slug="bench")
    follower = Follow.objects.values_list("follower_id", flat=True).first()
    assert follower is not None
    audiences = {
        f"league board, {MEMBERS} members": (
            league_members_sql(league.pk),
            league.owner_id,
            MEMBERS,
        ),
        f"friends board, following {FOLLOWED}": (friends_sql(follower), follower, FOLLOWED + 1),
    }
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Boards ({repeat} runs each, after one warm-up; load average {load}):")
    for order in ("score", "moves"):
        for label, (audience, viewer, players) in audiences.items():

            def board(order: str = order, audience: Any = audience, viewer: int = viewer) -> dict:
                return leaderboard_among(
                    date=DAY, order=order, audience=audience, limit=100, mine=(viewer,)
                )

            shown = board()
            with override_settings(BOARD_MIRROR=False):
                assert shown == board(), "the mirror and the table give other boards"
            timed(f"{label} ({order}, {shown['total']} on it), mirror", repeat, board)
            with override_settings(BOARD_MIRROR=False):
                board_timed(f"  the same from the table, {players:,} lookups", repeat, board)


def build_mirror() -> None:
    """Build the day's board mirror as the worker's `build the board mirror` job does, from scratch,
    and print its time and the Redis memory it takes."""
    import redis
    from django.conf import settings

    from leaderboards.mirror import _key
    from leaderboards.services import board_mirror_build

    client = redis.Redis.from_url(settings.REDIS_URL)
    client.unlink(_key(DAY))
    before = client.info("memory")["used_memory"]
    t = time.perf_counter()
    players = board_mirror_build(date=DAY)
    assert players, "the mirror was not built: is Redis at REDIS_URL?"
    grown = (client.info("memory")["used_memory"] - before) / 2**20
    print(
        f"  the day's board mirror built: {players:,} players in {time.perf_counter() - t:.1f} s, "
        f"{grown:.0f} MB of Redis memory ({grown * 2**20 / players:.0f} bytes a player)",
        flush=True,
    )


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure_standings(repeat: int) -> None:
    from django.db import connection

    from leagues.models import DayPoints, League, Standing
    from leagues.selectors import league_standings, standings_page
    from leagues.services import _STANDINGS_SQL, day_points_settle, standings_rank

    print("Standings:")
    t = time.perf_counter()
    settled = day_points_settle(date=DAY)
    seconds = time.perf_counter() - t
    print(f"  settle {DAY}: rank and points of {settled:,} entries in {seconds:.1f} s")
    t = time.perf_counter()
    week_start = DAY - datetime.timedelta(days=DAY.weekday())
    others = [week_start + datetime.timedelta(days=n) for n in range(WEEK_DAYS)]
    others.remove(DAY)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM leagues_daypoints WHERE date <> %s", [DAY])
        for offset, other in enumerate(others, start=1):
            # Another day of the same players, their places shuffled (a fixed permutation).
            cursor.execute(
                """
                INSERT INTO leagues_daypoints (date, player_id, rank, points)
                SELECT %s, player_id, shuffled, 10 + (90 * (%s - shuffled + 1)) / %s
                FROM (SELECT player_id, ((rank::bigint * %s) %% %s) + 1 AS shuffled
                      FROM leagues_daypoints WHERE date = %s) d
                """,
                [other, settled, settled, 7919 * offset + 1, settled, DAY],
            )
        cursor.execute("ANALYZE leagues_daypoints")
    rows = DayPoints.objects.count()
    print(f"  {rows:,} day rows for the week written in {time.perf_counter() - t:.1f} s")
    before = peak_mb()
    t = time.perf_counter()
    ranked = standings_rank(period="week", start=DAY)
    seconds = time.perf_counter() - t
    print(
        f"  rank the week: {ranked:,} players in {seconds:.1f} s; "
        f"this process's peak memory {before:.0f} MB before, {peak_mb():.0f} MB after"
    )
    first = week_start
    last = first + datetime.timedelta(days=6)
    with connection.cursor() as cursor:
        select = _STANDINGS_SQL.split("SELECT", 1)[1]
        cursor.execute(
            f"EXPLAIN (ANALYZE, BUFFERS, FORMAT TEXT) SELECT {select}",
            ["week", first, first, last],
        )
        plan = [row[0] for row in cursor.fetchall()]
    print("  the plan's sorts and aggregates (memory bounded by work_mem, then disk):")
    for line in plan:
        if any(word in line for word in ("Sort Method", "Batches", "Memory Usage", "Disk")):
            print(f"    {line.strip()}")
    viewer = Standing.objects.filter(period="week", start=first).order_by("-rank").first()
    assert viewer is not None
    league = League.objects.get(slug="bench")
    timed(
        "week standings, top 100 and the viewer's place",
        repeat,
        lambda: standings_page(period="week", at=DAY, limit=100, viewer=viewer.player),
    )
    timed(
        f"league standings ({MEMBERS} members)",
        repeat,
        lambda: league_standings(league=league, period="week", at=DAY, viewer=viewer.player),
    )


def main() -> None:
    def options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--skip-standings", action="store_true", help="time the boards only")

    args = prepare(__doc__, fill_leagues, fill_history, options=options)
    measure_boards(args.repeat)
    if not args.skip_standings:
        measure_standings(args.repeat)


if __name__ == "__main__":
    main()
