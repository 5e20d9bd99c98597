"""Every write the boards make when games change, one call per store, in order.

`ranking.actions` calls these inside its transaction, with the player's row
locked; the live boards hear of a change only after it commits. The stores,
and who writes them:

- `BoardEntry`, with the changes of the boards' counts (`BoardCountChange`):
  `board_entries_offer` (a new ranked game) or `board_entries_recompute`;
- the day's board mirror in Redis (`leaderboards.mirror`): `board_mirror_write`,
  the player's record pending now and the new one after the commit;
- the player's record `PlayerStats`: `player_stats_count` or
  `player_stats_recompute`;
- the live boards (the channel layer), after the commit: `live.board_changed`.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Sequence
from functools import partial

from django.contrib.auth.models import User
from django.db import transaction

from games.models import Game
from leaderboards import live
from leaderboards.models import BoardEntry
from leaderboards.services import (
    board_entries_offer,
    board_entries_recompute,
    board_mirror_write,
    game_is_ranked,
    player_stats_count,
    player_stats_recompute,
)


def _announce(date: datetime.date, orders: Collection[str], player: int) -> None:
    if orders:
        transaction.on_commit(
            partial(live.board_changed, date=date, orders=tuple(orders), players=(player,))
        )


def game_ranked(*, game: Game) -> None:
    """A stored game of a day that counts goes on its boards, into the mirror and
    into its player's record; the live boards hear of it after the commit.

    Practice goes nowhere. A player deleted or banned while the submission
    waited for their row is refused by the submission itself, which reads
    `is_active` under the lock.
    """
    if game.daily is None or not game_is_ranked(game):
        return
    date = game.daily.date
    player_stats_count(game=game)
    board_mirror_write(player_id=game.player_id, date=date, game=game)
    moved = board_entries_offer(game=game)
    _announce(date, moved, game.player_id)


def _player_day_rebuilt(player: User, date: datetime.date) -> None:
    """The player's entries of `date` rebuilt from their games, the mirror in step,
    the live boards told after the commit."""
    moved = board_entries_recompute(player=player, date=date)
    if moved:
        board_mirror_write(player_id=player.pk, date=date)
    _announce(date, moved, player.pk)


def game_unranked(*, game: Game) -> None:
    """A voided game of a day leaves the boards (the player's entries are rebuilt)
    and, when it was ranked, their record."""
    if game.daily is not None:
        _player_day_rebuilt(game.player, game.daily.date)
        if game.ranked:
            player_stats_recompute(player=game.player)


def player_reranked(*, player: User, dates: Sequence[datetime.date]) -> None:
    """A banned player leaves every board at once; a lifted ban or a held game
    cleared brings their games back."""
    for date in dates:
        _player_day_rebuilt(player, date)
    player_stats_recompute(player=player)


def player_unranked(*, player: User) -> None:
    """A deleted player's games leave every board at once: each day they are on is
    rebuilt (without them), and the live boards hear of it after commit."""
    dates = (
        BoardEntry.objects.filter(player=player)
        .values_list("date", flat=True)
        .distinct()
        .order_by("date")
    )
    player_reranked(player=player, dates=list(dates))
