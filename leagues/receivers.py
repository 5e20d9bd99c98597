"""The leagues follow the games, the boards and the accounts: a closed day whose
board changes (a voided game, a ban or its lifting, a held game cleared, a
deleted player) is settled again by the standings job, and a deleted player
leaves every league and every follow. A stored game changes nothing here: a
day is settled once it has closed.

The game services reach these through `games.derived` (registered in
`LeaguesConfig.ready`, after the boards'), a deleted account through
`easyharp_site.accounts.signals`; each runs inside that service's transaction.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User
from django.dispatch import receiver

from easyharp_site.accounts.signals import player_deleted
from games.derived import DerivedStores
from games.models import Game
from leagues.models import DayPoints
from leagues.services import player_leagues_forget, settled_days_stale


def day_unsettled_by_void(game: Game) -> None:
    """A voided game of a settled day: the day's points are computed again."""
    if game.daily is not None:
        settled_days_stale(dates=[game.daily.date])


def days_unsettled_by_ban(player: User, dates: Sequence[datetime.date]) -> None:
    """A ban, its lifting or a held game cleared changes the boards of the player's days."""
    settled_days_stale(dates=list(dates))


STANDINGS = DerivedStores(
    app="leagues", game_voided=day_unsettled_by_void, player_games_changed=days_unsettled_by_ban
)


@receiver(player_deleted, dispatch_uid="leagues.player_deleted")
def player_forgotten(*, player: User, **_: Any) -> None:
    """A deleted player's days are computed again without them; they leave every league."""
    days = DayPoints.objects.filter(player=player).values_list("date", flat=True)
    settled_days_stale(dates=list(days))
    player_leagues_forget(player=player)
