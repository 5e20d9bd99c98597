"""The boards follow the games: what `games.signals` announces lands on the boards here.

Every receiver runs inside the game service's transaction, with the player's
row locked; the live boards hear of a change only after it commits.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Iterable
from functools import partial
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.dispatch import receiver

from games.models import Game
from games.signals import game_stored, game_voided, player_games_changed
from leaderboards import live
from leaderboards.services import board_entries_offer, board_entries_recompute


def _announce(date: datetime.date, orders: Collection[str]) -> None:
    if orders:
        transaction.on_commit(partial(live.board_changed, date=date, orders=tuple(orders)))


@receiver(game_stored, sender=Game, dispatch_uid="leaderboards.game_stored")
def game_ranked(*, game: Game, **_: Any) -> None:
    """A player's ranked game of the day goes on the boards (practice goes nowhere)."""
    if game.daily is not None:
        _announce(game.daily.date, board_entries_offer(game=game))


@receiver(game_voided, sender=Game, dispatch_uid="leaderboards.game_voided")
def game_unranked(*, game: Game, **_: Any) -> None:
    """A voided game of the day leaves the boards (the player's entries are recomputed)."""
    if game.daily is not None:
        _announce(
            game.daily.date, board_entries_recompute(player=game.player, date=game.daily.date)
        )


@receiver(player_games_changed, sender=Game, dispatch_uid="leaderboards.player_games_changed")
def player_reranked(*, player: User, dates: Iterable[datetime.date], **_: Any) -> None:
    """A banned player leaves every board at once; a lifted ban brings them back."""
    for date in dates:
        _announce(date, board_entries_recompute(player=player, date=date))
