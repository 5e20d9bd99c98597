"""The boards follow the games: what `games.signals` announces lands on the boards here.

Both receivers run inside the game service's transaction, with the player's
row locked; the live boards hear of a change only after it commits.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection
from functools import partial
from typing import Any

from django.db import transaction
from django.dispatch import receiver

from games.models import Game
from games.signals import game_stored, game_voided
from leaderboards import live
from leaderboards.services import board_entries_offer, board_entries_recompute


def _announce(date: datetime.date, orders: Collection[str]) -> None:
    if orders:
        transaction.on_commit(partial(live.board_changed, date=date, orders=tuple(orders)))


@receiver(game_stored, sender=Game, dispatch_uid="leaderboards.game_stored")
def game_ranked(*, game: Game, **_: Any) -> None:
    """A game of the day goes on the boards where it beats the player's entry."""
    if game.daily is not None:
        _announce(game.daily.date, board_entries_offer(game=game))


@receiver(game_voided, sender=Game, dispatch_uid="leaderboards.game_voided")
def game_unranked(*, game: Game, **_: Any) -> None:
    """A voided game of the day leaves the boards (the player's best is recomputed)."""
    if game.daily is not None:
        _announce(
            game.daily.date, board_entries_recompute(player=game.player, date=game.daily.date)
        )
