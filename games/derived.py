"""The stores derived from games, and the one way a change of games reaches them.

Boards and their counters, the board mirror in Redis, the players' records,
the live boards and the leagues' settled days are caches of the games, kept by
the apps that rank games (`leaderboards`, then `leagues`). They sit above this
app, which must not import them (`.importlinter`: a game is valid without any
board). So each of them registers one `DerivedStores` when it is ready
(`AppConfig.ready`), and the game services call the functions below,
inside their transaction with the player's row locked: each registered app's
function runs in turn, in registration order, which is `INSTALLED_APPS`'
order (the boards before the leagues). One level, in a fixed order, and each
app's function names every write it makes, one call per store:

- `leaderboards.receivers`: board entries and counters, the board mirror,
  the player's record, and after commit the live boards;
- `leagues.receivers`: the closed days whose points must be settled again;
- `races.services`: after commit, a banned player's races (they are out of
  every race not over), each under its own lock as every race write is.

A plain registry rather than Django signals: a signal's receivers may come
from any module imported anywhere, in an order nobody wrote down, and a
receiver may send a signal of its own; here the list is `registered()`, and
the stores' functions call no further dispatch.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User

from games.models import Game


def _nothing(*_: object, **__: object) -> None:
    return None


@dataclass(frozen=True)
class DerivedStores:
    """One app's stores derived from games: what each change of games writes there.

    `game_stored(game)`: a game was stored (a new submission, not an idempotent
    retry). `game_voided(game)`: a
    moderator voided it; it counts nowhere now. `player_games_changed(player,
    dates)`: whether the player's ranked games of `dates` count changed (a ban,
    its lifting, a held game cleared). `player_banned(player)`: a moderator
    banned the player (after `player_games_changed`); a contest still running
    drops them.
    """

    app: str
    game_stored: Callable[[Game], None] = _nothing
    game_voided: Callable[[Game], None] = _nothing
    player_games_changed: Callable[[User, Sequence[datetime.date]], None] = _nothing
    player_banned: Callable[[User], None] = _nothing


_REGISTERED: list[DerivedStores] = []


def derived_stores_register(stores: DerivedStores) -> None:
    """Register an app's stores (once, from its `AppConfig.ready`; again replaces them)."""
    for index, known in enumerate(_REGISTERED):
        if known.app == stores.app:
            _REGISTERED[index] = stores
            return
    _REGISTERED.append(stores)


def registered() -> tuple[DerivedStores, ...]:
    """The registered apps' stores, in the order they are written."""
    return tuple(_REGISTERED)


def _in_every_app(write: Callable[[DerivedStores], None]) -> None:
    """`write` each registered app's stores, in order."""
    for stores in _REGISTERED:
        write(stores)


def game_stored(*, game: Game) -> None:
    """A game was stored: every app's stores take it, in order."""
    _in_every_app(lambda stores: stores.game_stored(game))


def game_voided(*, game: Game) -> None:
    """A game was voided: every app's stores drop it, in order."""
    _in_every_app(lambda stores: stores.game_voided(game))


def player_games_changed(*, player: User, dates: Sequence[datetime.date]) -> None:
    """Whether the player's ranked games of `dates` count changed: every app's stores follow."""
    _in_every_app(lambda stores: stores.player_games_changed(player, dates))


def player_banned(*, player: User) -> None:
    """A moderator banned the player: every app's stores drop them where they still compete."""
    _in_every_app(lambda stores: stores.player_banned(player))
