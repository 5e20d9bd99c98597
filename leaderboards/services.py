"""Writes to the leaderboards: keep each player's ranked entry per day and board.

Only a player's ranked game of the day counts, and only while it is not
assisted, not voided and the player is not banned (an active account).

Called by `leaderboards.receivers`, which the game services reach through
`games.derived` for a stored or voided game or a ban, inside their
transaction, with the player's row locked, so one player's entries are never
written by two transactions at once. Whoever writes or removes a player's
entries of a day brings the day's mirror in Redis in step after them
(`board_mirror_write`).
The shared counters (`BoardTotal`, `BoardBucket`) are always changed in one
order, the totals before the buckets, each by board and ascending key, so
that concurrent submissions never wait on each other in a circle.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from easyharp_site.statements import Statement, first_rows, write
from games.derived import NOT_READ
from games.models import DailyDeal, Game, ReviewState
from leaderboards import mirror
from leaderboards.models import (
    DURATION_UNKNOWN,
    Board,
    BoardBucket,
    BoardEntry,
    BoardTotal,
    DayResult,
    board_sort_key,
)
from leaderboards.records import RECORD_FIELDS, Record, record_fold
from leaderboards.selectors import day_records, day_records_after

BOARDS: tuple[str, ...] = (Board.SCORE, Board.MOVES)

# The order of games on each board, as Django orderings (best first); a game
# with no measured duration comes after those with one, as on the boards.
_DURATION = F("duration_ms").asc(nulls_last=True)
GAME_ORDERINGS: dict[str, tuple[Any, ...]] = {
    Board.SCORE: ("-score", "moves", _DURATION, "created_at", "id"),
    Board.MOVES: ("moves", "-score", _DURATION, "created_at", "id"),
}


def game_counts_on(*, board: str, game: Game) -> bool:
    """Unfinished games count on the score board; only won games on the moves board."""
    return board == Board.SCORE or game.won


def game_is_ranked(game: Game) -> bool:
    """Whether a game may be on a board at all: the player's ranked game of a day,
    unassisted, not voided, not held for review, by an active (not banned) player."""
    return (
        game.daily_id is not None
        and game.ranked
        and not game.assisted
        and game.voided_at is None
        and game.review_state != ReviewState.HELD
        and game.player.is_active
    )


def _counted_games(*, player: User) -> QuerySet[Game]:
    """`game_is_ranked` as a query: the player's games, of any day, that may be on a board."""
    return Game.objects.filter(
        player=player,
        daily__isnull=False,
        ranked=True,
        assisted=False,
        voided_at__isnull=True,
        player__is_active=True,
    ).exclude(review_state=ReviewState.HELD)


def _ranked_games(*, player: User, date: datetime.date) -> QuerySet[Game]:
    """The player's games of `date` that may be on a board."""
    return _counted_games(player=player).filter(daily__date=date)


def _entry_values(board: str, game: Game) -> dict[str, Any]:
    key1, key2 = board_sort_key(board=board, score=game.score, moves=game.moves)
    return {
        "game": game,
        "key1": key1,
        "key2": key2,
        "duration_ms": game.duration_ms if game.duration_ms is not None else DURATION_UNKNOWN,
        "submitted_at": game.created_at,
        "score": game.score,
        "moves": game.moves,
        "won": game.won,
    }


# An entry that moved on its board: (board, its bucket before, its bucket after),
# None where it was not on the board, or is no longer.
_Move = tuple[str, int | None, int | None]

# The counters as plain statements: every ranked submission changes two to four
# of them, and the ORM's query building cost more than the statements
# (bench/submit.py). Counting up is an upsert (a counter's first entry creates its
# row), one statement for a run of counters; counting down an UPDATE (PostgreSQL
# checks `players >= 0` on the row an upsert proposes, before the conflict).
_COUNTERS: dict[str, tuple[str, ...]] = {
    "leaderboards_boardtotal": ("date", "board"),
    "leaderboards_boardbucket": ("date", "board", "key1"),
}


def _counters_add(table: str, rows: list[tuple[Any, ...]]) -> None:
    """Add each row's last value to the counter its other values name, in the order given."""
    keys = _COUNTERS[table]
    run: list[tuple[Any, ...]] = []

    def count_up() -> None:
        if run:
            marks = ", ".join(["(" + ", ".join(["%s"] * len(run[0])) + ")"] * len(run))
            write(
                f"INSERT INTO {table} ({', '.join(keys)}, players) VALUES {marks} "
                f"ON CONFLICT ({', '.join(keys)}) "
                f"DO UPDATE SET players = {table}.players + excluded.players",
                [value for row in run for value in row],
            )
            run.clear()

    for row in rows:
        if row[-1] > 0:
            run.append(row)
            continue
        count_up()
        where = " AND ".join(f"{key} = %s" for key in keys)
        write(f"UPDATE {table} SET players = players + %s WHERE {where}", [row[-1], *row[:-1]])
    count_up()


def board_counter_add(
    *, date: datetime.date, board: str, delta: int, key1: int | None = None
) -> None:
    """Add `delta` players to one counter of `date`: its board's total, or with
    `key1` that bucket's (for `leaderboards.checks`, which mends a counter by
    its difference from the games)."""
    if not delta:
        return
    table, row = (
        ("leaderboards_boardtotal", (date, board, delta))
        if key1 is None
        else ("leaderboards_boardbucket", (date, board, key1, delta))
    )
    _counters_add(table, [row])


def _counts_change(*, date: datetime.date, moves: list[_Move]) -> None:
    """Count entries of `date` that moved between buckets of their boards.

    The totals (`BoardTotal`) before the buckets (`BoardBucket`), each in
    (board, key) order: every writer takes the counters' rows in that one
    order, so concurrent submissions never wait on each other in a circle. A
    new ranked game costs two statements.
    """
    totals: dict[str, int] = {}
    buckets: dict[tuple[str, int], int] = {}
    for board, old, new in moves:
        if old == new:
            continue
        if old is None or new is None:
            totals[board] = totals.get(board, 0) + (1 if old is None else -1)
        if old is not None:
            buckets[board, old] = buckets.get((board, old), 0) - 1
        if new is not None:
            buckets[board, new] = buckets.get((board, new), 0) + 1
    day = connection.ops.adapt_datefield_value(date)
    _counters_add(
        "leaderboards_boardtotal",
        [(day, board, delta) for board, delta in sorted(totals.items()) if delta],
    )
    _counters_add(
        "leaderboards_boardbucket",
        [(day, *bucket, delta) for bucket, delta in sorted(buckets.items()) if delta],
    )


_ENTRY_COLUMNS = (
    "date, board, player_id, game_id, key1, key2, duration_ms, submitted_at, score, moves, won"
)


def board_entries_offer(*, game: Game) -> list[str]:
    """Put a newly stored ranked game of the day on its boards.

    Writes its entries and the boards' counters, and returns the boards that
    moved (none for practice, an assisted game, a held game or a banned
    player). The caller holds the player's lock. A player's entries of
    a day only ever show their ranked game of that day, of which there is one
    (a unique constraint), so a new one finds no entry to replace.
    """
    if not game_is_ranked(game):
        return []
    assert game.daily is not None
    date = game.daily.date
    boards = [board for board in BOARDS if game_counts_on(board=board, game=game)]
    # One plain INSERT: in every ranked submission (see `_counts_change`).
    day = connection.ops.adapt_datefield_value(date)
    submitted = connection.ops.adapt_datetimefield_value(game.created_at)
    rows = []
    for board in boards:
        values = _entry_values(board, game)
        rows.append(
            (day, board, game.player_id, game.pk, values["key1"], values["key2"])
            + (values["duration_ms"], submitted, game.score, game.moves, game.won)
        )
    marks = ", ".join(["(" + ", ".join(["%s"] * len(rows[0])) + ")"] * len(rows))
    write(
        f"INSERT INTO leaderboards_boardentry ({_ENTRY_COLUMNS}) VALUES {marks}",
        [value for row in rows for value in row],
    )
    _counts_change(date=date, moves=[(row[1], None, row[4]) for row in rows])
    return boards


def board_entries_recompute(*, player: User, date: datetime.date) -> list[str]:
    """Rebuild a player's entries of `date` from their games that still count.

    Used when a game is voided, when a player is banned or their ban is lifted,
    and when a player is deleted (whose games count no more). Writes the
    entries and the boards' counters, and returns the boards that moved. The
    caller holds the player's lock.
    """
    # A deleted player is deactivated, so `_ranked_games` leaves them out like a banned one.
    games = _ranked_games(player=player, date=date)
    entries = {entry.board: entry for entry in BoardEntry.objects.filter(date=date, player=player)}
    moved: list[_Move] = []
    for board in BOARDS:
        # At most one ranked game per player and day (a unique constraint);
        # ordered all the same, so that this never depends on it.
        candidates = games if board == Board.SCORE else games.filter(won=True)
        best = candidates.order_by(*GAME_ORDERINGS[board]).first()
        entry = entries.get(board)
        if best is None:
            if entry is not None:
                entry.delete()
                moved.append((board, entry.key1, None))
            continue
        values = _entry_values(board, best)
        if entry is None:
            BoardEntry.objects.create(date=date, board=board, player=player, **values)
            moved.append((board, None, values["key1"]))
        elif entry.game_id != best.pk:
            BoardEntry.objects.filter(pk=entry.pk).update(**values)
            moved.append((board, entry.key1, values["key1"]))
    _counts_change(date=date, moves=moved)
    return [board for board, _, _ in moved]


def board_entries_rewrite(*, player: User, date: datetime.date) -> None:
    """Write a player's entries of `date` again from their games that still count,
    whatever the entries held, and bring the board mirror in step.

    For `leaderboards.checks`, which mends entries that drifted from their games:
    the counters are left as they are (the check mends them on their own, by
    the difference from the games). The caller holds the player's lock.
    """
    games = _ranked_games(player=player, date=date)
    BoardEntry.objects.filter(date=date, player=player).delete()
    entries = []
    for board in BOARDS:
        candidates = games if board == Board.SCORE else games.filter(won=True)
        best = candidates.order_by(*GAME_ORDERINGS[board]).first()
        if best is not None:
            entries.append(
                BoardEntry(date=date, board=board, player=player, **_entry_values(board, best))
            )
    BoardEntry.objects.bulk_create(entries)
    board_mirror_write(player_id=player.pk, date=date)


def board_mirror_write(*, player_id: int, date: datetime.date, game: Game | None = None) -> None:
    """Bring the player's record of `date` in the board mirror in step with their
    entries, just written in this transaction (their lock held): pending until
    the commit, then the new record (`game`'s, a ranked game just put on the
    boards; else read from the table). Nothing when the mirror is off."""
    version = mirror.mirror_pending(date=date, player_id=player_id)
    if version is None:
        return
    if game is not None:
        values = _entry_values(Board.SCORE, game)
        record = mirror.game_record(
            game_id=game.pk,
            score=game.score,
            moves=game.moves,
            won=game.won,
            duration_ms=values["duration_ms"],
            submitted_at=values["submitted_at"],
        )
    else:
        record = day_records(date=date, player_ids=[player_id])[player_id]
    mirror.mirror_store(date=date, player_id=player_id, record=record, version=version)


# Players read from the table per batch while the board mirror is built.
MIRROR_BUILD_BATCH = 5_000


def board_mirror_build(*, date: datetime.date, batch: int = MIRROR_BUILD_BATCH) -> int | None:
    """Build the day's board mirror from the table, unless it is complete already.

    Adds every entry of the day in batches of `batch` players, each written only
    where no record is (a writer's wins), then marks the mirror complete.
    Returns the number of players read, or None when there was nothing to do
    (off, complete, or Redis failing) or the build did not finish (the mirror
    was dropped meanwhile: the next build starts again).
    """
    token = mirror.mirror_build_start(date=date)
    if token is None:
        return None
    after, players = 0, 0
    while records := day_records_after(date=date, after=after, limit=batch):
        if not mirror.mirror_add(date=date, records=dict(records)):
            return None
        players += len(records)
        after = records[-1][0]
    return players if mirror.mirror_build_finish(date=date, token=token) else None


# --- Players' records ----------------------------------------------------------------


# A player's record, read and written as plain statements: in every ranked
# submission, where the ORM's building of them cost more than the statements.
_STATS_COLUMNS = ", ".join(RECORD_FIELDS)
_STATS_READ_SQL = f"SELECT {_STATS_COLUMNS} FROM leaderboards_playerstats WHERE player_id = %s"
_STATS_STORE_SQL = f"""
INSERT INTO leaderboards_playerstats (player_id, {_STATS_COLUMNS})
VALUES (%s, {", ".join(["%s"] * len(RECORD_FIELDS))})
ON CONFLICT (player_id) DO UPDATE SET
{", ".join(f"{name} = excluded.{name}" for name in RECORD_FIELDS)}
"""


def player_stats_reading(player_id: int) -> Statement:
    """The read of a player's kept record (`player_stats_count` takes its row)."""
    return (_STATS_READ_SQL, [player_id])


def _stats_of(row: Any) -> Record:
    """The record in a row that `player_stats_reading` read (None: nothing counted yet)."""
    if row is None or row[RECORD_FIELDS.index("last_date")] is None:
        return Record()
    values = dict(zip(RECORD_FIELDS, row, strict=True))
    histogram = values["moves_vs_par"]
    # JSON arrives as text from both backends (as Django reads it).
    values["moves_vs_par"] = json.loads(histogram) if isinstance(histogram, str) else histogram
    return Record(**values)


def _stats_store(player_id: int, record: Record) -> None:
    """Write a player's record (one statement, the first one's too). The caller
    holds the player's lock, so no other transaction writes this row."""
    values = [getattr(record, name) for name in RECORD_FIELDS]
    values[RECORD_FIELDS.index("last_date")] = connection.ops.adapt_datefield_value(
        record.last_date
    )
    values[RECORD_FIELDS.index("moves_vs_par")] = json.dumps(record.moves_vs_par)
    write(_STATS_STORE_SQL, [player_id, *values])


def player_stats_recompute(*, player: User) -> None:
    """Fold the player's record again from every game of theirs that is on the boards.

    One indexed read of at most one row per day played; used when a game is
    voided, a ban is set or lifted, or a game arrives for a day before the last
    one counted. The caller holds the player's lock.
    """
    days = (
        _counted_games(player=player)
        .order_by("daily__date")
        .values_list("daily__date", "won", "score", "moves", "daily__par")
    )
    _stats_store(player.pk, record_fold(days))


def player_stats_count(*, game: Game, row: Any = NOT_READ) -> None:
    """Count a newly stored game in its player's record, when it is on the boards.

    The usual case, a day after the last one counted, adds it to the stored
    record (one row read and written); any other is a recompute. The caller
    holds the player's lock, and may have read the record's `row` under it
    (`player_stats_reading`, in the lock's round trip).
    """
    if not game_is_ranked(game):
        return
    assert game.daily is not None
    if row is NOT_READ:
        (row,) = first_rows([player_stats_reading(game.player_id)])
    record = _stats_of(row)
    if record.last_date is not None and game.daily.date <= record.last_date:
        player_stats_recompute(player=game.player)
        return
    record.add(
        date=game.daily.date,
        won=game.won,
        score=game.score,
        moves=game.moves,
        par=game.daily.par,
    )
    _stats_store(game.player_id, record)


# --- Closing a day ---------------------------------------------------------------------

# Entries ranked per statement: each batch is an index range of the board and
# one UPDATE, so the memory and the locks a close holds stay bounded.
CLOSE_BATCH = 50_000
# Minutes after midnight UTC before a day closes: a submission sent just
# before midnight is still stored for its day.
CLOSE_GRACE = datetime.timedelta(minutes=2)

_ORDER = "key1, key2, duration_ms, submitted_at, game_id"
_BATCH_END_SQL = f"""
SELECT {_ORDER} FROM leaderboards_boardentry
WHERE date = %s AND board = %s AND ({_ORDER}) > (%s, %s, %s, %s, %s)
ORDER BY {_ORDER} LIMIT 1 OFFSET %s
"""
_LAST_SQL = f"""
SELECT {_ORDER} FROM leaderboards_boardentry
WHERE date = %s AND board = %s ORDER BY key1 DESC, key2 DESC, duration_ms DESC,
    submitted_at DESC, game_id DESC LIMIT 1
"""
_RANK_BATCH_SQL = f"""
INSERT INTO leaderboards_finalrank (entry_id, rank)
SELECT id, %s + row_number() OVER (ORDER BY {_ORDER})
FROM leaderboards_boardentry
WHERE date = %s AND board = %s
    AND ({_ORDER}) > (%s, %s, %s, %s, %s) AND ({_ORDER}) <= (%s, %s, %s, %s, %s)
ON CONFLICT (entry_id) DO UPDATE SET rank = excluded.rank
    WHERE leaderboards_finalrank.rank <> excluded.rank
"""
# Before every entry of a board: no key sorts lower.
_KEY_FLOOR: tuple[Any, ...] = (
    -(2**31),
    -(2**31),
    -(2**31),
    datetime.datetime(1, 1, 2, tzinfo=datetime.UTC),
    0,
)


def _key_params(key: tuple[Any, ...]) -> list[Any]:
    """A sort key as query parameters (its time as the database stores times)."""
    key1, key2, duration_ms, submitted_at, game = key
    return [key1, key2, duration_ms, connection.ops.adapt_datetimefield_value(submitted_at), game]


def final_ranks_store(*, date: datetime.date, board: str, batch: int = CLOSE_BATCH) -> int:
    """Store the final rank of every entry of one board, in batches of `batch`
    entries in board order; returns the entries whose rank was written (a rank
    already stored is not written again, so a second close writes nothing)."""
    written = 0
    # Entries before the batch: every batch but the last holds exactly `batch`.
    before = 0
    after = _key_params(tuple(_KEY_FLOOR))
    with connection.cursor() as cursor:
        cursor.execute(_LAST_SQL, [date, board])
        last = cursor.fetchone()
        if last is None:
            return 0
        last_key = _key_params(last)
        while True:
            cursor.execute(_BATCH_END_SQL, [date, board, *after, batch - 1])
            end = cursor.fetchone()
            until = _key_params(end) if end is not None else last_key
            with transaction.atomic():
                cursor.execute(_RANK_BATCH_SQL, [before, date, board, *after, *until])
                written += int(cursor.rowcount)
            if end is None:
                return written
            before += batch
            after = until


def _distribution(*, date: datetime.date, board: str) -> list[list[int]]:
    """[[value, players], ...] by ascending value: the score or the moves of a board's buckets."""
    buckets = BoardBucket.objects.filter(date=date, board=board, players__gt=0)
    if board == Board.SCORE:
        return sorted([-key1, players] for key1, players in buckets.values_list("key1", "players"))
    return [
        [key1, players] for key1, players in buckets.order_by("key1").values_list("key1", "players")
    ]


def day_close(*, date: datetime.date, batch: int = CLOSE_BATCH) -> DayResult:
    """Close a day: store each entry's final rank and freeze the day's results.

    Running it again gives the same ranks and results (the boards of a closed
    day no longer take games). Each batch of ranks commits on its own, and the
    results row last, so a close cut short is simply run again.
    """
    for board in BOARDS:
        final_ranks_store(date=date, board=board, batch=batch)
    totals = dict(BoardTotal.objects.filter(date=date).values_list("board", "players"))
    result, _ = DayResult.objects.update_or_create(
        date=date,
        defaults={
            "players": totals.get(Board.SCORE, 0),
            "won": totals.get(Board.MOVES, 0),
            "score_distribution": _distribution(date=date, board=Board.SCORE),
            "moves_distribution": _distribution(date=date, board=Board.MOVES),
            "closed_at": timezone.now(),
        },
    )
    return result


def days_to_close(*, now: datetime.datetime) -> list[datetime.date]:
    """The days over (their deal closed, with a grace for late submissions) and not closed yet."""
    last_over = (now - CLOSE_GRACE).date() - datetime.timedelta(days=1)
    closed = DayResult.objects.values("date")
    days = DailyDeal.objects.filter(date__lte=last_over).exclude(date__in=closed)
    return sorted(days.values_list("date", flat=True))
