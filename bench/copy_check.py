"""What the copy check costs a ranked submission with 1,000,000 games of the day's deal.

    .venv/bin/python bench/copy_check.py                  # --games 1000000 --repeat 200
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/eh_copies_bench \
        .venv/bin/python bench/copy_check.py --games 100000 --keep

It creates and migrates a dedicated PostgreSQL database, then fills it in SQL
(generate_series, foreign-key triggers off while filling): `--games` games of
one deal by 10,000 players, and their sketches, `SKETCH_SIZE` fingerprint rows
each (24,000,000 rows for a million games). Sketches are made as real ones
look at the low end of the hash space: each game has 3 hashes drawn from 150
tables that many games pass through (so each of those is in about 20,000
sketches: the hot rows the per-hash limit is for) and the rest its own.

Then it times, `--repeat` times each after a warm-up, the parts of the check
a ranked submission runs (`games.copies`):

- the tables of its game (a won log of the day's deal, 569 actions);
- the lookup of the games sharing its sketch (one query), for an honest game
  (3 hot hashes, the rest its own) and for a copy of a stored game; and the
  rows it reads (EXPLAIN ANALYZE);
- the whole check (`copy_review`) for a copy: lookup, the candidates' logs,
  replaying them;
- storing its sketch (one insert of `SKETCH_SIZE` rows).

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
    """Fingerprint rows the lookup reads, from PostgreSQL's own count (EXPLAIN ANALYZE)."""
    from django.db import connection

    from games import copies

    with connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN (ANALYZE, FORMAT JSON) " + copies._CANDIDATES_POSTGRES,  # noqa: SLF001
            [hashes, DEAL_NUMBER, PLAYERS + 1, copies.PER_HASH_LIMIT, copies.CANDIDATES],
        )
        plan = cursor.fetchone()[0][0]["Plan"]
    return _scanned(plan)


def _scanned(plan: dict[str, Any]) -> int:
    own = 0
    if plan.get("Relation Name") == "games_gamefingerprint" or plan.get(
        "Index Name", ""
    ).startswith("fingerprint"):
        own = int(plan["Actual Rows"] * plan["Actual Loops"])
    return own + sum(_scanned(child) for child in plan.get("Plans", []))


def measure(games: int, repeat: int) -> None:
    from django.db import connection, transaction

    from games import copies
    from games.models import Game, GameFingerprint
    from tests.fixtures import WIN_LOG

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT hash FROM games_gamefingerprint WHERE game_id = %s ORDER BY hash", [games // 2]
        )
        stored = [row[0] for row in cursor.fetchall()]
    honest = [*stored[:HOT_PER_GAME], *range(-(2**62), -(2**62) + copies.SKETCH_SIZE - 3)]
    honest.sort()
    player = PLAYERS + 1

    def lookup(hashes: list[int]) -> Callable[[], object]:
        return lambda: copies.candidates_sharing(
            deal_number=DEAL_NUMBER, player_id=player, hashes=hashes
        )

    print(f"\nper submission, {games:,} games of the deal ({repeat} runs each):")
    tables = copies.game_tables(deal_number=DEAL_NUMBER, log=WIN_LOG, won=True)
    timed(
        "tables of the game (569 actions, 153 tables)",
        repeat,
        lambda: copies.game_tables(deal_number=DEAL_NUMBER, log=WIN_LOG, won=True),
    )
    timed("lookup, an honest game (3 hot hashes)", repeat, lookup(honest))
    timed("lookup, a copy of a stored game", repeat, lookup(stored))
    print(
        f"  rows read by the lookup: honest {rows_read(honest)}, copy {rows_read(stored)}"
        f" (at most {copies.SKETCH_SIZE} x {copies.PER_HASH_LIMIT})"
    )
    found = copies.candidates_sharing(deal_number=DEAL_NUMBER, player_id=player, hashes=stored)
    print(f"  the copy's candidates: {found}")

    # A copy whose original's log is a real win: give the stored game WIN_LOG's
    # log and sketch, then run the whole check as a submission does.
    original = Game.objects.get(pk=games // 2)
    Game.objects.filter(pk=original.pk).update(log=" ".join(WIN_LOG), won=True)
    GameFingerprint.objects.filter(game=original).delete()
    copies.fingerprint_store(game=Game.objects.get(pk=original.pk), tables=tables)
    review = copies.copy_review(
        deal_number=DEAL_NUMBER, player_id=player, tables=tables, solver_line=""
    )
    print(f"  the copy's review: {review.flags} of game {review.copy_of}, {review.similarity}")
    timed(
        "whole check, a copy (lookup, logs, replay of 1 game)",
        repeat,
        lambda: copies.copy_review(
            deal_number=DEAL_NUMBER, player_id=player, tables=tables, solver_line=""
        ),
    )
    fresh = Game.objects.get(pk=games)
    # Inside one transaction, as in a submission, rolled back at the end.
    with transaction.atomic():
        timed(
            f"storing the sketch ({copies.SKETCH_SIZE} rows)",
            repeat,
            lambda: copies.fingerprint_store(game=fresh, tables=tables),
        )
        transaction.set_rollback(True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=200)
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
    finally:
        connection.close()
        if not args.keep:
            with admin_connection()[0] as again:
                again.execute(f'DROP DATABASE "{name}"')
            print(f"\n{name} dropped")


if __name__ == "__main__":
    main()
