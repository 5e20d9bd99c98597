"""Writes to the leaderboards: keep each player's ranked entry per day and board.

Only a player's ranked game of the day counts, and only while it is not
assisted, not voided and the player is not banned (an active account).

Called by `leaderboards.receivers` when the game services announce a stored or
voided game or a ban, inside their transaction, with the player's row locked,
so one player's entries are never written by two transactions at once.
The shared counters (`BoardTotal`, `BoardBucket`) are always changed in one
order, board by board, the total before the buckets and buckets by ascending
key, so that concurrent submissions never wait on each other in a circle.
"""

from __future__ import annotations

import datetime
from typing import Any, TypeVar

from django.contrib.auth.models import User
from django.db import connection
from django.db.models import F, QuerySet

from games.models import Game
from leaderboards.models import DURATION_UNKNOWN, Board, BoardBucket, BoardEntry, BoardTotal

BOARDS: tuple[str, ...] = (Board.SCORE, Board.MOVES)

# The order of games on each board, as Django orderings (best first); a game
# with no measured duration comes after those with one, as on the boards.
_DURATION = F("duration_ms").asc(nulls_last=True)
GAME_ORDERINGS: dict[str, tuple[Any, ...]] = {
    Board.SCORE: ("-score", "moves", _DURATION, "created_at", "id"),
    Board.MOVES: ("moves", "-score", _DURATION, "created_at", "id"),
}


def board_sort_key(*, board: str, score: int, moves: int) -> tuple[int, int]:
    """(key1, key2) of an entry: ascending on both boards, best first."""
    if board == Board.SCORE:
        return -score, moves
    return moves, -score


def game_counts_on(*, board: str, game: Game) -> bool:
    """Unfinished games count on the score board; only won games on the moves board."""
    return board == Board.SCORE or game.won


def game_is_ranked(game: Game) -> bool:
    """Whether a game may be on a board at all: the player's ranked game of a day,
    unassisted, not voided, by an active (not banned) player."""
    return (
        game.daily_id is not None
        and game.ranked
        and not game.assisted
        and game.voided_at is None
        and game.player.is_active
    )


def _ranked_games(*, player: User, date: datetime.date) -> QuerySet[Game]:
    """`game_is_ranked` as a query: the player's games of `date` that may be on a board."""
    return Game.objects.filter(
        player=player,
        daily__date=date,
        ranked=True,
        assisted=False,
        voided_at__isnull=True,
        player__is_active=True,
    )


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


_Counter = TypeVar("_Counter", BoardTotal, BoardBucket)


def _counter_add(model: type[_Counter], delta: int, **where: datetime.date | str | int) -> None:
    # Plain SQL: every ranked submission changes two to four counters, and the
    # ORM's query building cost more than the statement itself (bench/submit.py).
    columns = " AND ".join(f"{column} = %s" for column in where)
    sql = f"UPDATE {model._meta.db_table} SET players = players + %s WHERE {columns}"
    with connection.cursor() as cursor:
        cursor.execute(sql, [delta, *where.values()])
        if cursor.rowcount:
            return
    # The first entry it counts: create the row (a concurrent first entry may
    # win the race, hence ignore_conflicts), then count.
    model.objects.bulk_create([model(players=0, **where)], ignore_conflicts=True)
    model.objects.filter(**where).update(players=F("players") + delta)


def _counts_change(*, date: datetime.date, board: str, old: int | None, new: int | None) -> None:
    """Count an entry that moved from bucket `old` to bucket `new` (None: off the board)."""
    if old is None and new is not None:
        _counter_add(BoardTotal, 1, date=date, board=board)
    elif new is None and old is not None:
        _counter_add(BoardTotal, -1, date=date, board=board)
    if old == new:
        return
    changes = [(key, -1) for key in (old,) if key is not None]
    changes += [(key, 1) for key in (new,) if key is not None]
    for key1, delta in sorted(changes):
        _counter_add(BoardBucket, delta, date=date, board=board, key1=key1)


def board_entries_offer(*, game: Game) -> list[str]:
    """Put a newly stored ranked game of the day on its boards.

    Returns the boards that moved (none for practice, an assisted game or a
    banned player). The caller holds the player's lock. A player's entries of
    a day only ever show their ranked game of that day, of which there is one
    (a unique constraint), so a new one finds no entry to replace.
    """
    if not game_is_ranked(game):
        return []
    assert game.daily is not None
    date = game.daily.date
    boards = [board for board in BOARDS if game_counts_on(board=board, game=game)]
    entries = [
        BoardEntry(date=date, board=board, player_id=game.player_id, **_entry_values(board, game))
        for board in boards
    ]
    BoardEntry.objects.bulk_create(entries)
    for entry in entries:
        _counts_change(date=date, board=entry.board, old=None, new=entry.key1)
    return boards


def board_entries_recompute(*, player: User, date: datetime.date) -> list[str]:
    """Rebuild a player's entries of `date` from their games that still count.

    Used when a game is voided, when a player is banned or their ban is lifted,
    and when a player is deleted (whose games count no more). Returns the boards
    that moved. The caller holds the player's lock.
    """
    # A deleted player is deactivated, so `_ranked_games` leaves them out like a banned one.
    games = _ranked_games(player=player, date=date)
    entries = {entry.board: entry for entry in BoardEntry.objects.filter(date=date, player=player)}
    moved: list[str] = []
    for board in BOARDS:
        # At most one ranked game per player and day (a unique constraint);
        # ordered all the same, so that this never depends on it.
        candidates = games if board == Board.SCORE else games.filter(won=True)
        best = candidates.order_by(*GAME_ORDERINGS[board]).first()
        entry = entries.get(board)
        if best is None:
            if entry is not None:
                entry.delete()
                _counts_change(date=date, board=board, old=entry.key1, new=None)
                moved.append(board)
            continue
        values = _entry_values(board, best)
        if entry is None:
            BoardEntry.objects.create(date=date, board=board, player=player, **values)
            _counts_change(date=date, board=board, old=None, new=values["key1"])
            moved.append(board)
        elif entry.game_id != best.pk:
            BoardEntry.objects.filter(pk=entry.pk).update(**values)
            _counts_change(date=date, board=board, old=entry.key1, new=values["key1"])
            moved.append(board)
    return moved
