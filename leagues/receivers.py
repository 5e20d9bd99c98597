"""The leagues follow the games, the boards and the accounts: a closed day whose
board changes (a voided game, a ban or its lifting, a deleted player) is settled
again by the standings job, and a deleted player leaves every league and every
follow.

Every receiver runs inside the announcing service's transaction.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import User
from django.dispatch import receiver

from easyharp_site.accounts.signals import player_deleted
from games.models import Game
from games.signals import game_voided, player_games_changed
from leagues.models import DayPoints
from leagues.services import player_leagues_forget, settled_days_stale


@receiver(game_voided, sender=Game, dispatch_uid="leagues.game_voided")
def day_unsettled_by_void(*, game: Game, **_: Any) -> None:
    """A voided game of a settled day: the day's points are computed again."""
    if game.daily is not None:
        settled_days_stale(dates=[game.daily.date])


@receiver(player_games_changed, sender=Game, dispatch_uid="leagues.player_games_changed")
def days_unsettled_by_ban(*, dates: Iterable[datetime.date], **_: Any) -> None:
    """A ban or its lifting changes the boards of the player's days."""
    settled_days_stale(dates=list(dates))


@receiver(player_deleted, dispatch_uid="leagues.player_deleted")
def player_forgotten(*, player: User, **_: Any) -> None:
    """A deleted player's days are computed again without them; they leave every league."""
    days = DayPoints.objects.filter(player=player).values_list("date", flat=True)
    settled_days_stale(dates=list(days))
    player_leagues_forget(player=player)
