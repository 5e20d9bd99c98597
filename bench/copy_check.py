"""What the copy check costs per ranked game with 1,000,000 games of the day's deal, and
whether its job keeps up with the submissions.

    .venv/bin/python bench/copy_check.py                  # --games 1000000 --repeat 200
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/eh_copies_bench \
        .venv/bin/python bench/copy_check.py --games 100000 --keep

It creates and migrates a dedicated PostgreSQL database, then fills it in SQL
(generate_series, foreign-key triggers off while filling): `--games` games of
one deal by 10,000 players, and their sketches, `SKETCH_SIZE` fingerprint rows
each (24,000,000 rows for a million games). Sketches are made as real ones
look in the keyed order: each game has 3 values drawn from 150 tables that
many games pass through (so each of those is in about 20,000 sketches: the
hot rows the per-hash limit is for) and the rest its own.

Then it times, `--repeat` times each after a warm-up, the parts of the check
(`games.copies`):

- the tables of a game (a won log of the day's deal, 569 actions) and when
  the server had each;
- the lookup of the games whose sketches hold its tables (one query over all
  of its keyed tables), for an honest game (3 hot tables, the rest its own)
  and for a copy of a stored game; and the rows it reads (EXPLAIN ANALYZE);
- the whole comparison (`copy_review`) for a copy: lookup, the candidates'
  logs, replaying them;
- storing its sketch (one insert of `SKETCH_SIZE` rows).

And the job itself (`pending_fingerprints_check`) over `--pending` ranked
games of streamed attempts submitted since its last run, half of them
honest (unfinished games of random legal play, each its own) and half
copies of one stored win: its cost per game, the rate it keeps up with, and
the lag of a game at a day of `--games` games.

The database is dropped at the end unless `--keep` is given.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/eh_copies_bench")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "easyharp_site.settings")

import psycopg  # noqa: E402

from bench import databases  # noqa: E402
from bench.databases import ensure_database  # noqa: E402

DEAL_NUMBER = 4
PLAYERS = 10_000
HOT_TABLES = 150
HOT_PER_GAME = 3


def admin_connection() -> tuple[psycopg.Connection[Any], str]:
    return databases.admin_connection(os.environ["DATABASE_URL"])


def fill(games: int) -> None:
    """Players, games and their sketches, written by the database itself."""
    from django.db import connection

    from games.copies import SKETCH_SIZE

    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        cursor.execute(
            "TRUNCATE games_gamefingerprint, games_game, auth_user RESTART IDENTITY CASCADE"
        )
        cursor.execute(
            "INSERT INTO auth_user (id, password, is_superuser, username, first_name, "
            "last_name, email, is_staff, is_active, date_joined) "
            "SELECT p, '!', false, 'player' || p, '', '', '', false, true, now() "
            "FROM generate_series(1, %s) p",
            [PLAYERS + 1],
        )
        began = time.perf_counter()
        cursor.execute(
            "INSERT INTO games_game (id, player_id, deal_number, log, score, moves, won, "
            "actions, rules_version, created_at, void_reason, request_digest, ranked, "
            "assisted, review, review_flags, review_state) "
            "SELECT g, 1 + g %% %s, %s, 'S', 0, 1, false, 1, 'EH1', now(), '', '', "
            "false, false, '{}', '', '' FROM generate_series(1, %s) g",
            [PLAYERS, DEAL_NUMBER, games],
        )
        print(f"  {games:,} games in {time.perf_counter() - began:.0f} s", flush=True)
        began = time.perf_counter()
        # The index is built once after the rows, not row by row.
        cursor.execute("DROP INDEX fingerprint_deal_hash")
        cursor.execute(
            "INSERT INTO games_gamefingerprint (deal_number, hash, game_id, player_id) "
            "SELECT %s, CASE WHEN k <= %s THEN (k * 1000 + (g * 7 + k) %% %s) "
            "ELSE ((g::bigint * 2654435761 + k * 40503) %% 9000000000000000000) + 100000 END, "
            "g, 1 + g %% %s "
            "FROM generate_series(1, %s) g CROSS JOIN generate_series(1, %s) k",
            [DEAL_NUMBER, HOT_PER_GAME, HOT_TABLES // HOT_PER_GAME, PLAYERS, games, SKETCH_SIZE],
        )
        print(
            f"  {games * SKETCH_SIZE:,} fingerprint rows in {time.perf_counter() - began:.0f} s",
            flush=True,
        )
        began = time.perf_counter()
        cursor.execute(
            "CREATE INDEX fingerprint_deal_hash ON games_gamefingerprint "
            "(deal_number, hash) INCLUDE (game_id, player_id)"
        )
        cursor.execute("SET session_replication_role = origin")
        cursor.execute("VACUUM ANALYZE games_gamefingerprint")
        print(f"  index and analyze in {time.perf_counter() - began:.0f} s", flush=True)


def timed(label: str, repeat: int, call: Callable[[], object]) -> None:
    call()
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        call()
        times.append((time.perf_counter() - began) * 1000)
    times.sort()
    p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
    print(
        f"  {label:<58} median {statistics.median(times):6.2f} ms  p95 {p95:6.2f} ms  "
        f"max {times[-1]:6.2f} ms"
    )


def rows_read(hashes: list[int]) -> int:
    """Fingerprint rows the lookup reads: of each hash's rows (other players' games),
    as many as its limit lets through."""
    from django.db import connection

    from games import copies

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(least(rows, %s)), 0) FROM (SELECT count(*) AS rows "
            "FROM games_gamefingerprint WHERE deal_number = %s AND hash = ANY(%s) "
            "AND player_id <> %s GROUP BY hash) per_hash",
            [copies.PER_HASH_LIMIT, DEAL_NUMBER, hashes, PLAYERS + 1],
        )
        return int(cursor.fetchone()[0])


def measure(games: int, repeat: int) -> None:
    from django.db import connection, transaction

    from games import copies
    from games.models import Game, GameFingerprint
    from tests.fixtures import WIN_LOG

    tables = copies.game_tables(deal_number=DEAL_NUMBER, log=WIN_LOG, won=True)
    keyed = sorted(copies.sketch_key(tables))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT hash FROM games_gamefingerprint WHERE game_id = %s ORDER BY hash", [games // 2]
        )
        stored = [row[0] for row in cursor.fetchall()]
    # What the lookup reads of a game: its first LOOKUP_TABLES keyed tables. An honest
    # game's: 3 hot tables, the rest its own; a copy's: the stored game's sketch
    # among tables of its own.
    honest = sorted([*stored[:HOT_PER_GAME], *keyed[HOT_PER_GAME : copies.LOOKUP_TABLES]])
    copy = sorted({*stored, *keyed[: copies.LOOKUP_TABLES - len(stored)]})
    player = PLAYERS + 1

    def lookup(hashes: list[int]) -> Callable[[], object]:
        return lambda: copies.candidates_sharing(
            deal_number=DEAL_NUMBER, player_id=player, hashes=hashes
        )

    print(f"\nper game, {games:,} games of the deal ({repeat} runs each):")
    times = list(range(len(WIN_LOG)))
    timed(
        f"tables of the game and their times ({len(WIN_LOG)} actions, {len(tables)} tables)",
        repeat,
        lambda: copies.game_read(deal_number=DEAL_NUMBER, log=WIN_LOG, won=True, times=times),
    )
    timed(f"lookup, an honest game ({len(honest)} tables, 3 hot)", repeat, lookup(honest))
    timed(f"lookup, a copy of a stored game ({len(copy)} tables)", repeat, lookup(copy))
    print(
        f"  rows read by the lookup: honest {rows_read(honest)}, copy {rows_read(copy)}"
        f" (at most {len(copy)} x {copies.PER_HASH_LIMIT})"
    )
    found = copies.candidates_sharing(deal_number=DEAL_NUMBER, player_id=player, hashes=copy)
    print(f"  the copy's candidates: {found}")

    # A copy whose original's log is a real win: give the stored game WIN_LOG's
    # log and sketch, then run the whole comparison as the job does.
    original = Game.objects.get(pk=games // 2)
    Game.objects.filter(pk=original.pk).update(
        log=" ".join(WIN_LOG), won=True, actions=len(WIN_LOG)
    )
    GameFingerprint.objects.filter(game=original).delete()
    copies.fingerprint_store(game=Game.objects.get(pk=original.pk), tables=tables)
    review = copies.copy_review(
        deal_number=DEAL_NUMBER, player_id=player, tables=tables, solver_line=""
    )
    print(f"  the copy's review: {review.flags} of game {review.copy_of}, {review.similarity}")
    timed(
        "whole comparison, a copy (lookup, logs, replay of 1 game)",
        repeat,
        lambda: copies.copy_review(
            deal_number=DEAL_NUMBER, player_id=player, tables=tables, solver_line=""
        ),
    )
    fresh = Game.objects.get(pk=games)
    # Inside one transaction, as in the job, rolled back at the end.
    with transaction.atomic():
        timed(
            f"storing the sketch ({copies.SKETCH_SIZE} rows)",
            repeat,
            lambda: copies.fingerprint_store(game=fresh, tables=tables),
        )
        transaction.set_rollback(True)


def job(games: int, pending: int) -> None:
    """The job over `pending` ranked games of streamed attempts stored since its last run."""
    import datetime
    import random

    from django.db import connection
    from django.utils import timezone

    from bench.copies import random_play
    from games import copies
    from games.models import Attempt, DailyDeal, Game
    from games.rules import replay
    from ranking.actions import copies_check
    from tests.fixtures import WIN_LOG

    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO auth_user (id, password, is_superuser, username, first_name, "
            "last_name, email, is_staff, is_active, date_joined) "
            "SELECT p, '!', false, 'player' || p, '', '', '', false, true, now() "
            "FROM generate_series(%s, %s) p ON CONFLICT DO NOTHING",
            [PLAYERS + 2, PLAYERS + 1 + pending],
        )
        # The fill wrote the games' ids itself.
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence('games_game', 'id'), max(id)) FROM games_game"
        )
    now = timezone.now()
    day, _ = DailyDeal.objects.get_or_create(date=now.date(), defaults={"number": DEAL_NUMBER})
    rng = random.Random(1)
    logs: list[tuple[str, list[str]]] = []
    honest: list[frozenset[int]] = []
    while len(logs) < pending:
        if len(logs) % 2:
            logs.append(("copy", WIN_LOG))
            continue
        log = random_play(DEAL_NUMBER, rng.randint(60, 200), rng)
        tables = copies.game_tables(deal_number=DEAL_NUMBER, log=log, won=False)
        # Random play on one deal can repeat itself: games of their own only (sharing
        # fewer tables with each other than any copy's match needs).
        if all(len(tables & other) < copies.COPY_MIN_TABLES for other in honest):
            honest.append(tables)
            logs.append(("honest", log))
    started = now - datetime.timedelta(minutes=40)
    # The original was submitted (as practice) before the copies were played.
    Game.objects.filter(pk=games // 2).update(created_at=started - datetime.timedelta(hours=1))
    made: dict[str, list[int]] = {"honest": [], "copy": []}
    for index, (kind, log) in enumerate(logs):
        # Players of their own: one attempt per player and day.
        player = PLAYERS + 2 + index
        played = replay(DEAL_NUMBER, log)
        times = [1_000 + 2_000 * i + rng.randint(0, 1_500) for i in range(len(log))]
        attempt = Attempt.objects.create(
            player_id=player,
            daily=day,
            started_at=started,
            log=" ".join(log),
            times=times,
            version=len(log),
        )
        game = Game.objects.create(
            player_id=player,
            deal_number=DEAL_NUMBER,
            log=" ".join(played.log),
            score=played.score,
            moves=played.moves,
            won=played.is_won,
            actions=len(log),
            rules_version="EH1",
            daily=day,
            ranked=True,
            attempt=attempt,
            times=times,
            duration_ms=times[-1] + 1_000,
            created_at=now,
            fingerprint_pending=True,
        )
        made[kind].append(game.pk)
    later = now + datetime.timedelta(seconds=copies.SETTLE_SECONDS)
    began, cpu = time.perf_counter(), time.process_time()
    checked = copies_check(now=later)
    wall, cpu = time.perf_counter() - began, time.process_time() - cpu
    flagged = Game.objects.filter(pk__in=made["copy"], review_flags__contains="copied").count()
    wrong = Game.objects.filter(pk__in=made["honest"], review_flags__contains="copied").count()
    per_game = wall / checked
    rate = games / 86_400
    print(f"\nthe job over {checked} games stored since its last run ({pending // 2} copies):")
    print(
        f"  {wall:.2f} s ({cpu:.2f} s of this process's CPU): {per_game * 1000:.1f} ms a game, "
        f"{1 / per_game:.0f} games/s at most"
    )
    print(f"  copies flagged {flagged} of {len(made['copy'])}, honest games flagged {wrong}")
    for game in Game.objects.filter(pk__in=made["honest"], review_flags__contains="copied"):
        print(f"    honest game {game.pk} flagged: copy of {game.copy_of_id}, {game.review}")
    for peak in (1, 3, 10):
        busy = rate * peak * per_game
        print(
            f"  {games:,} games a day at {peak}x the mean rate ({rate * peak:.1f} games/s): "
            f"busy {busy:.0%} of one run; a game's lag at most "
            f"{copies.SETTLE_SECONDS + 60 + 60 * busy:.0f} s"
            + ("" if busy < 1 else " and growing: it does not keep up")
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--pending", type=int, default=400, help="games for the job's run")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    args = parser.parse_args()

    ensure_database(os.environ["DATABASE_URL"])
    name = admin_connection()[1]
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from django.db import connection

    print(f"filling {name}:", flush=True)
    fill(args.games)
    try:
        measure(args.games, args.repeat)
        job(args.games, args.pending)
    finally:
        connection.close()
        if not args.keep:
            with admin_connection()[0] as again:
                again.execute(f'DROP DATABASE "{name}"')
            print(f"\n{name} dropped")


if __name__ == "__main__":
    main()
