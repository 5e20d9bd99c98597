"""Writes to the leaderboards: keep each player's ranked entry per day and board.

Only a player's ranked game of the day counts, and only while it is not
assisted, not voided and the player is not banned (an active account).

Called by `leaderboards.changes`, which `ranking.actions` calls for a stored
or voided game, a cleared one, a ban or a deletion, inside its
transaction, with the player's row locked, so one player's entries are never
written by two transactions at once. Whoever writes or removes a player's
entries of a day brings the day's mirror in Redis in step after them
(`board_mirror_write`).
A submission writes rows of its own player and game only: its entries, its
record and its changes of the day's counts (`BoardCountChange`), which
`board_counts_fold` adds to the shared counters (`BoardTotal`,
`BoardBucket`) later, in batches.
"""

from __future__ import annotations

import datetime
import json
from typing import Any, TypeVar

from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from games.models import DailyDeal, Game, ReviewState
from leaderboards import mirror
from leaderboards.models import (
    DURATION_UNKNOWN,
    Board,
    BoardBucket,
    BoardCountChange,
    BoardEntry,
    BoardTotal,
    DayResult,
    board_sort_key,
)
from leaderboards.records import RECORD_FIELDS, Record, record_fold
from leaderboards.selectors import (
    board_buckets,
    board_totals,
    day_records,
    day_records_after,
    score_distribution,
)

BOARDS: tuple[str, ...] = (Board.SCORE, Board.MOVES)

# The order of games on each board, as Django orderings (best first); a game
# with no measured duration comes after those with one, as on the boards.
_DURATION = F("duration_ms").asc(nulls_last=True)
GAME_ORDERINGS: dict[str, tuple[Any, ...]] = {
    Board.SCORE: ("-won", "-score", "moves", _DURATION, "created_at", "id"),
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
    key1, key2 = board_sort_key(board=board, score=game.score, moves=game.moves, won=game.won)
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


def board_counter_add(*, date: datetime.date, board: str, key1: int, delta: int) -> None:
    """Add `delta` players to one bucket of `date` (and so to its board's total), as a
    change to fold (for `leaderboards.audit`, which mends a counter by its
    difference from the games)."""
    if delta:
        BoardCountChange.objects.create(date=date, board=board, key1=key1, players=delta)


def board_total_mend(*, date: datetime.date, board: str, delta: int) -> None:
    """Add `delta` players to a board's total alone (for `leaderboards.audit`, when
    the total drifted from its buckets)."""
    _counters_add(BoardTotal, ("date", "board"), {(date, board): delta})


def _counts_change(*, date: datetime.date, moves: list[_Move]) -> None:
    """Count entries of `date` that moved between buckets of their boards: rows of this
    transaction's own (`BoardCountChange`), folded into the counters later."""
    buckets: dict[tuple[str, int], int] = {}
    for board, old, new in moves:
        if old == new:
            continue
        if old is not None:
            buckets[board, old] = buckets.get((board, old), 0) - 1
        if new is not None:
            buckets[board, new] = buckets.get((board, new), 0) + 1
    day = connection.ops.adapt_datefield_value(date)
    changes = [
        (day, board, key1, delta) for (board, key1), delta in sorted(buckets.items()) if delta
    ]
    if changes:
        # One plain INSERT with its columns named: in every ranked submission.
        marks = ", ".join(["(%s, %s, %s, %s)"] * len(changes))
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO leaderboards_boardcountchange (date, board, key1, players) "
                f"VALUES {marks}",
                [value for change in changes for value in change],
            )


# Changes folded per transaction.
FOLD_BATCH = 2_000


def board_counts_fold(*, batch: int = FOLD_BATCH) -> int:
    """Fold the waiting count changes into the boards' counters; the number folded.

    The worker's job `fold board counts` runs it every minute. Each batch is one
    transaction: the changes are locked (a fold
    running at the same time waits, then finds them gone), added to their
    counters (totals before buckets, each in key order, so two folds never
    wait on each other in a circle) and deleted. Counts read the same before
    and after: a read adds the changes still waiting.
    """
    folded = 0
    while True:
        with transaction.atomic():
            changes = list(
                BoardCountChange.objects.select_for_update()
                .order_by("pk")
                .values_list("pk", "date", "board", "key1", "players")[:batch]
            )
            totals: dict[tuple[datetime.date, str], int] = {}
            buckets: dict[tuple[datetime.date, str, int], int] = {}
            for _, date, board, key1, delta in changes:
                totals[date, board] = totals.get((date, board), 0) + delta
                buckets[date, board, key1] = buckets.get((date, board, key1), 0) + delta
            _counters_add(BoardTotal, ("date", "board"), totals)
            _counters_add(BoardBucket, ("date", "board", "key1"), buckets)
            BoardCountChange.objects.filter(pk__in=[change[0] for change in changes]).delete()
        folded += len(changes)
        if len(changes) < batch:
            return folded


_Counter = TypeVar("_Counter", BoardTotal, BoardBucket)


def _counters_add(
    model: type[_Counter],
    keys: tuple[str, ...],
    deltas: dict[Any, int],
) -> None:
    """Add each delta to the counter row its key names (created at 0 when missing)."""
    changed = sorted((key, delta) for key, delta in deltas.items() if delta)
    model.objects.bulk_create(
        [model(**dict(zip(keys, key, strict=True)), players=0) for key, _ in changed],
        ignore_conflicts=True,
    )
    for key, delta in changed:
        model.objects.filter(**dict(zip(keys, key, strict=True))).update(
            players=F("players") + delta
        )


_ENTRY_COLUMNS = (
    "date, board, player_id, game_id, key1, key2, duration_ms, submitted_at, score, moves, won"
)


def board_entries_offer(*, game: Game) -> list[str]:
    """Put a newly stored ranked game of the day on its boards.

    Writes its entries and the changes of the boards' counts, and returns the boards that
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
    # One plain INSERT with its columns named: in every ranked submission.
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
    with connection.cursor() as cursor:
        cursor.execute(
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

    For `leaderboards.audit`, which mends entries that drifted from their games:
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


# A player's record, read and written as plain statements, each on its own: in
# every ranked submission, where the ORM's building of them cost more than the
# statements (docs/PERFORMANCE.md).
_STATS_COLUMNS = ", ".join(RECORD_FIELDS)
_STATS_READ_SQL = f"SELECT {_STATS_COLUMNS} FROM leaderboards_playerstats WHERE player_id = %s"
_STATS_STORE_SQL = f"""
INSERT INTO leaderboards_playerstats (player_id, {_STATS_COLUMNS})
VALUES (%s, {", ".join(["%s"] * len(RECORD_FIELDS))})
ON CONFLICT (player_id) DO UPDATE SET
{", ".join(f"{name} = excluded.{name}" for name in RECORD_FIELDS)}
"""


def _stats_read(player_id: int) -> Record:
    """A player's kept record (an empty one when nothing is counted yet)."""
    with connection.cursor() as cursor:
        cursor.execute(_STATS_READ_SQL, [player_id])
        row = cursor.fetchone()
        names = [column[0] for column in cursor.description]
    if row is None:
        return Record()
    values = dict(zip(names, row, strict=True))
    if values["last_date"] is None:
        return Record()
    # JSON arrives as text from both backends (as Django's field reads it).
    histogram = values["moves_vs_par"]
    values["moves_vs_par"] = json.loads(histogram) if isinstance(histogram, str) else histogram
    return Record(**values)


def _stats_store(player_id: int, record: Record) -> None:
    """Write a player's record, the first one too. The caller holds the player's lock,
    so no other transaction writes this row."""
    values = {name: getattr(record, name) for name in RECORD_FIELDS}
    values["last_date"] = connection.ops.adapt_datefield_value(record.last_date)
    values["moves_vs_par"] = json.dumps(record.moves_vs_par)
    with connection.cursor() as cursor:
        cursor.execute(_STATS_STORE_SQL, [player_id, *(values[name] for name in RECORD_FIELDS)])


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


def player_stats_count(*, game: Game) -> None:
    """Count a newly stored game in its player's record, when it is on the boards.

    The usual case, a day after the last one counted, adds it to the stored
    record (one row read and written); any other is a recompute. The caller
    holds the player's lock.
    """
    if not game_is_ranked(game):
        return
    assert game.daily is not None
    record = _stats_read(game.player_id)
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
    buckets = [(key1, players) for of, key1, players in board_buckets(date=date) if of == board]
    if board == Board.SCORE:
        return score_distribution(buckets)
    return [[key1, players] for key1, players in buckets]


def day_close(*, date: datetime.date, batch: int = CLOSE_BATCH) -> DayResult:
    """Close a day: store each entry's final rank and freeze the day's results.

    Running it again gives the same ranks and results (the boards of a closed
    day no longer take games). Each batch of ranks commits on its own, and the
    results row last, so a close cut short is simply run again.
    """
    for board in BOARDS:
        final_ranks_store(date=date, board=board, batch=batch)
    totals = board_totals(date=date)
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
