"""A day's boards recomputed from the games alone, to compare with the stored boards.

Written without the leaderboards' own code: which games count (each player's
ranked game of the day, unaided, not voided, of a player not deleted), and the
board order with its tie-breaks, straight from docs/RULES.md.
"""

from __future__ import annotations

import datetime
from collections import Counter
from typing import Any

from easyharp_site.accounts.models import Account
from games.models import Game
from leaderboards.models import score_bucket
from leaderboards.selectors import board_buckets, board_totals, leaderboard_page


def _key(order: str, game: Game) -> tuple[Any, ...]:
    if order == "score":
        # A win before a loss, whatever the scores.
        return (not game.won, -game.score, game.moves, game.duration_ms, game.created_at, game.pk)
    return (game.moves, -game.score, game.duration_ms, game.created_at, game.pk)


def recomputed(date: datetime.date, order: str) -> list[tuple[str, int, int, int]]:
    """(player, game, score, moves) of each entry of the board, best first."""
    deleted = set(
        Account.objects.filter(deleted_at__isnull=False).values_list("player_id", flat=True)
    )
    best: dict[int, Game] = {}
    counted = Game.objects.filter(
        daily__date=date, ranked=True, assisted=False, voided_at__isnull=True
    ).select_related("player")
    for game in counted:
        if game.player_id in deleted or (order == "moves" and not game.won):
            continue
        current = best.get(game.player_id)
        if current is None or _key(order, game) < _key(order, current):
            best[game.player_id] = game
    games = sorted(best.values(), key=lambda game: _key(order, game))
    return [(g.player.get_username(), g.pk, g.score, g.moves) for g in games]


def stored(date: datetime.date, order: str) -> list[tuple[str, int, int, int]]:
    """The same, as the leaderboards read the board."""
    page = leaderboard_page(date=date, order=order, limit=100)
    entries = [(e["player"], e["game"], e["score"], e["moves"]) for e in page["entries"]]
    assert page["total"] == len(entries), "the whole board fits one page here"
    return entries


def assert_boards_equal_a_recomputation(date: datetime.date) -> None:
    """The stored boards of `date`, their player counts and their buckets equal a
    recomputation from the games."""
    for order in ("score", "moves"):
        expected = recomputed(date, order)
        assert stored(date, order) == expected, (date, order)
        assert board_totals(date=date).get(order, 0) == len(expected), (date, order)
        # A bucket of the score board is a result and a score; of the moves board, moves.
        won = dict(
            Game.objects.filter(pk__in=[g for _, g, _, _ in expected]).values_list("pk", "won")
        )
        buckets = Counter(
            (won[game], score) if order == "score" else moves for _, game, score, moves in expected
        )
        stored_buckets = {
            score_bucket(key1) if order == "score" else key1: players
            for board, key1, players in board_buckets(date=date)
            if board == order
        }
        assert stored_buckets == dict(buckets), (date, order)
