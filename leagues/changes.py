"""The leagues follow the games, the boards and the accounts: a closed day whose
board changes (a voided game, a ban or its lifting, a held game cleared, a
deleted player) is settled again by the standings job, and a deleted player
leaves every league and every follow. A stored game changes nothing here: a
day is settled once it has closed.

`ranking.actions` calls these inside its transaction, after the boards'.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence

from django.contrib.auth.models import User

from games.models import Game
from leagues.models import DayPoints
from leagues.services import player_leagues_forget, settled_days_stale


def day_unsettled_by_void(*, game: Game) -> None:
    """A voided game of a settled day: the day's points are computed again."""
    if game.daily is not None:
        settled_days_stale(dates=[game.daily.date])


def days_unsettled(*, dates: Sequence[datetime.date]) -> None:
    """A ban, its lifting or a held game cleared changes the boards of these days."""
    settled_days_stale(dates=list(dates))


def player_forgotten(*, player: User) -> None:
    """A deleted player's days are computed again without them; they leave every league."""
    days = DayPoints.objects.filter(player=player).values_list("date", flat=True)
    settled_days_stale(dates=list(days))
    player_leagues_forget(player=player)
