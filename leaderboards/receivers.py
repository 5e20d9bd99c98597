"""The boards follow the games: what `games.signals` announces lands on the boards here,
and so does a deleted account (`easyharp_site.accounts.signals`).

Every receiver runs inside the announcing service's transaction, with the
player's row locked; the live boards hear of a change only after it commits.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection
from functools import partial
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.dispatch import receiver

from easyharp_site.accounts.selectors import player_is_deleted
from easyharp_site.accounts.signals import player_deleted
from games.models import Game
from games.signals import game_stored, game_voided
from leaderboards import live
from leaderboards.models import BoardEntry
from leaderboards.services import board_entries_offer, board_entries_recompute


def _announce(date: datetime.date, orders: Collection[str]) -> None:
    if orders:
        transaction.on_commit(partial(live.board_changed, date=date, orders=tuple(orders)))


@receiver(game_stored, sender=Game, dispatch_uid="leaderboards.game_stored")
def game_ranked(*, game: Game, **_: Any) -> None:
    """A game of the day goes on the boards where it beats the player's entry.

    Not if the player was deleted while the submission waited for their row
    (the deletion holds it): their games no longer rank.
    """
    if game.daily is not None and not player_is_deleted(player_id=game.player_id):
        _announce(game.daily.date, board_entries_offer(game=game))


@receiver(game_voided, sender=Game, dispatch_uid="leaderboards.game_voided")
def game_unranked(*, game: Game, **_: Any) -> None:
    """A voided game of the day leaves the boards (the player's best is recomputed)."""
    if game.daily is not None:
        _announce(
            game.daily.date, board_entries_recompute(player=game.player, date=game.daily.date)
        )


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
        _announce(date, board_entries_recompute(player=player, date=date))
