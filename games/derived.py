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

A new game's stores may need a row of their own to write it (the player's
record, to count one more day): each app may name that read
(`game_reading`), and the submission makes it under the player's lock in
the lock's own round trip (`game_readings`), then hands the rows over with
the game.

A plain registry rather than Django signals: a signal's receivers may come
from any module imported anywhere, in an order nobody wrote down, and a
receiver may send a signal of its own; here the list is `registered()`, and
the stores' functions call no further dispatch.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from django.contrib.auth.models import User

from easyharp_site.statements import Statement, writes_together
from games.models import Game


def _nothing(*_: object, **__: object) -> None:
    return None


class _NotRead:
    def __repr__(self) -> str:
        return "NOT_READ"


# What an app's `game_stored` gets for its row when its `game_reading` was not made
# ahead (the app reads it itself, if it needs it).
NOT_READ: Final = _NotRead()


@dataclass(frozen=True)
class DerivedStores:
    """One app's stores derived from games: what each change of games writes there.

    `game_reading(player_id)`, if given: the read that the app's `game_stored`
    needs for a new game of that player. `game_stored(game, row)`: a game was
    stored (a new submission, not an idempotent retry); `row` is the first row
    of the app's `game_reading`, read under the player's lock (None: no row),
    or `NOT_READ` (the app reads what it needs itself). `game_voided(game)`: a
    moderator voided it; it counts nowhere now. `player_games_changed(player,
    dates)`: whether the player's ranked games of `dates` count changed (a ban,
    its lifting, a held game cleared). `player_banned(player)`: a moderator
    banned the player (after `player_games_changed`); a contest still running
    drops them.
    """

    app: str
    game_reading: Callable[[int], Statement] | None = None
    game_stored: Callable[[Game, Any], None] = _nothing
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
    """`write` each registered app's stores, in order; the writes whose results
    nobody reads go to the database together (`easyharp_site.statements`)."""
    with writes_together():
        for stores in _REGISTERED:
            write(stores)


def game_readings(*, player_id: int) -> list[Statement]:
    """The reads that the apps' stores need for a new game of the player, in order:
    to run under the player's lock, with it (`easyharp_site.statements.first_rows`),
    their first rows then given to `game_stored`."""
    return [stores.game_reading(player_id) for stores in _REGISTERED if stores.game_reading]


def game_stored(*, game: Game, rows: Sequence[Any] | None = None) -> None:
    """A game was stored: every app's stores take it, in order.

    `rows`: the first rows of `game_readings(player_id=game.player_id)`, read
    under the player's lock since; without them each app reads what it needs."""
    read = iter(rows) if rows is not None else None

    def store(stores: DerivedStores) -> None:
        row = next(read) if read is not None and stores.game_reading else NOT_READ
        stores.game_stored(game, row)

    _in_every_app(store)


def game_voided(*, game: Game) -> None:
    """A game was voided: every app's stores drop it, in order."""
    _in_every_app(lambda stores: stores.game_voided(game))


def player_games_changed(*, player: User, dates: Sequence[datetime.date]) -> None:
    """Whether the player's ranked games of `dates` count changed: every app's stores follow."""
    _in_every_app(lambda stores: stores.player_games_changed(player, dates))


def player_banned(*, player: User) -> None:
    """A moderator banned the player: every app's stores drop them where they still compete."""
    _in_every_app(lambda stores: stores.player_banned(player))
