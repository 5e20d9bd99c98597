"""Writes to the leaderboards: keep each player's best entry per day and board.

Called by `leaderboards.receivers` when the game services announce a stored or
voided game, inside their transaction, with the player's row locked, so one
player's entries are never written by two transactions at once.
The shared counters (`BoardTotal`, `BoardBucket`) are always changed in one
order, board by board, the total before the buckets and buckets by ascending
key, so that concurrent submissions never wait on each other in a circle.
"""

from __future__ import annotations

import datetime
from typing import Any, TypeVar

from django.contrib.auth.models import User
from django.db.models import F

from easyharp_site.accounts.selectors import player_is_deleted
from games.models import Game
from leaderboards.models import Board, BoardBucket, BoardEntry, BoardTotal

BOARDS: tuple[str, ...] = (Board.SCORE, Board.MOVES)

# The order of games on each board, as Django orderings (best first).
GAME_ORDERINGS: dict[str, tuple[str, ...]] = {
    Board.SCORE: ("-score", "moves", "created_at", "id"),
    Board.MOVES: ("moves", "-score", "created_at", "id"),
}


def board_sort_key(*, board: str, score: int, moves: int) -> tuple[int, int]:
    """(key1, key2) of an entry: ascending on both boards, best first."""
    if board == Board.SCORE:
        return -score, moves
    return moves, -score


def game_counts_on(*, board: str, game: Game) -> bool:
    """Unfinished games count on the score board; only won games on the moves board."""
    return board == Board.SCORE or game.won


def _entry_values(board: str, game: Game) -> dict[str, Any]:
    key1, key2 = board_sort_key(board=board, score=game.score, moves=game.moves)
    return {
        "game": game,
        "key1": key1,
        "key2": key2,
        "submitted_at": game.created_at,
        "score": game.score,
        "moves": game.moves,
        "won": game.won,
    }


_Counter = TypeVar("_Counter", BoardTotal, BoardBucket)


def _counter_add(model: type[_Counter], delta: int, **where: object) -> None:
    updated = model.objects.filter(**where).update(players=F("players") + delta)
    if not updated:
        # The first entry it counts: create the row (a concurrent first entry
        # may win the race, hence ignore_conflicts), then count.
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
    """Put a newly stored game of the day on the boards where it beats the player's entry.

    Returns the boards that moved. The caller holds the player's lock and has
    checked that the game counts for `game.daily`.
    """
    assert game.daily is not None
    date = game.daily.date
    entries = {
        entry.board: entry
        for entry in BoardEntry.objects.filter(date=date, player_id=game.player_id)
    }
    moved: list[str] = []
    for board in BOARDS:
        if not game_counts_on(board=board, game=game):
            continue
        values = _entry_values(board, game)
        entry = entries.get(board)
        if entry is None:
            BoardEntry.objects.create(date=date, board=board, player_id=game.player_id, **values)
            _counts_change(date=date, board=board, old=None, new=values["key1"])
            moved.append(board)
            continue
        new = (values["key1"], values["key2"], game.created_at, game.pk)
        old = (entry.key1, entry.key2, entry.submitted_at, entry.game_id)
        if new < old:
            BoardEntry.objects.filter(pk=entry.pk).update(**values)
            _counts_change(date=date, board=board, old=entry.key1, new=values["key1"])
            moved.append(board)
    return moved


def board_entries_recompute(*, player: User, date: datetime.date) -> list[str]:
    """Rebuild a player's entries of `date` from their games that still count.

    Used when a game is voided or a player deleted (whose games count no
    more). Returns the boards that moved. The caller holds the player's lock.
    """
    games = Game.objects.filter(player=player, daily__date=date, voided_at__isnull=True)
    if player_is_deleted(player_id=player.pk):
        games = games.none()
    entries = {entry.board: entry for entry in BoardEntry.objects.filter(date=date, player=player)}
    moved: list[str] = []
    for board in BOARDS:
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
