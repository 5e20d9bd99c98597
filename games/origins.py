"""Where a game of no day was played, as the app above games that stored it says (a
race's game): its replay page names it and links to it.

A game of no day (`game_submit(no_day=True)`) is stored by an app that games
may not import (`.importlinter`: races sits above games), so the Game row
cannot say what it belongs to without games knowing every such app. Rather
than a field of games naming a kind it does not own, or a URL it could not
check, each app registers here, from its `AppConfig.ready`, a read that
tells its own games apart and describes them (as `games.holds` lets an app
hold a deal's hints). The replay page asks once per game of no day.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from games.models import Game


@dataclass(frozen=True)
class GameOrigin:
    """What a game was played in: `kind` (a stable word: "race"), `label` (its name in
    the active language), `url` (its page), and the player's final `place` among
    `players` when the app ranks them."""

    kind: str
    label: str
    url: str
    place: int | None = None
    players: int | None = None


# Each app's: the origin of a game if it is one of the app's, else None.
Origin = Callable[[Game], GameOrigin | None]

_ORIGINS: dict[str, Origin] = {}


def game_origin_register(*, app: str, origin: Origin) -> None:
    """Register an app's read of its games' origin (again: replaces it)."""
    _ORIGINS[app] = origin


def game_origin(*, game: Game) -> GameOrigin | None:
    """Where `game` was played, if an app claims it; None for a game of a day (ranked
    or practice, which the daily contest describes) and for a plain practice game."""
    if game.daily_id is not None:
        return None
    for origin in _ORIGINS.values():
        found = origin(game)
        if found is not None:
            return found
    return None
