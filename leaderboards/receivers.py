"""The boards and the players' records follow the games: what `games.signals` announces
lands on the boards and in `PlayerStats` here, and so does a deleted account
(`easyharp_site.accounts.signals`).

Every receiver runs inside the announcing service's transaction, with the
player's row locked; the live boards hear of a change only after it commits.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Iterable
from functools import partial
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.dispatch import receiver

from easyharp_site.accounts.signals import player_deleted
from games.models import Game
from games.signals import game_stored, game_voided, player_games_changed
from leaderboards import live
from leaderboards.models import BoardEntry
from leaderboards.services import (
    board_entries_offer,
    board_entries_recompute,
    player_stats_count,
    player_stats_recompute,
)


def _announce(date: datetime.date, orders: Collection[str], player: int) -> None:
    if orders:
        transaction.on_commit(
            partial(live.board_changed, date=date, orders=tuple(orders), players=(player,))
        )


@receiver(game_stored, sender=Game, dispatch_uid="leaderboards.game_stored")
def game_ranked(*, game: Game, **_: Any) -> None:
    """A player's ranked game of the day goes on the boards (practice goes nowhere).

    A player deleted or banned while the submission waited for their row is
    refused by the submission itself, which reads `is_active` under the lock.
    """
    if game.daily is not None:
        _announce(game.daily.date, board_entries_offer(game=game), game.player_id)
        player_stats_count(game=game)


@receiver(game_voided, sender=Game, dispatch_uid="leaderboards.game_voided")
def game_unranked(*, game: Game, **_: Any) -> None:
    """A voided game of the day leaves the boards (the player's entries are recomputed)."""
    if game.daily is not None:
        _announce(
            game.daily.date,
            board_entries_recompute(player=game.player, date=game.daily.date),
            game.player_id,
        )
        if game.ranked:
            player_stats_recompute(player=game.player)


@receiver(player_deleted, dispatch_uid="leaderboards.player_deleted")
def player_unranked(*, player: User, **_: Any) -> None:
    """A deleted player's games leave every board at once: each day they are on is
    recomputed (without them), and the live boards hear of it after commit."""
    dates = (
        BoardEntry.objects.filter(player=player)
        .values_list("date", flat=True)
        .distinct()
        .order_by("date")
    )
    for date in list(dates):
        _announce(date, board_entries_recompute(player=player, date=date), player.pk)
    player_stats_recompute(player=player)


@receiver(player_games_changed, sender=Game, dispatch_uid="leaderboards.player_games_changed")
def player_reranked(*, player: User, dates: Iterable[datetime.date], **_: Any) -> None:
    """A banned player leaves every board at once; a lifted ban brings them back."""
    for date in dates:
        _announce(date, board_entries_recompute(player=player, date=date), player.pk)
    player_stats_recompute(player=player)
