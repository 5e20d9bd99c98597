"""Where a game of no day was played, as the app above games that stored it says (a
race's game): its replay page names it and links to it.

A game of no day (`game_store(no_day=True)`) is stored by an app that games
may not import (`.importlinter`: races sits above games), so the Game row
cannot say what it belongs to without games knowing every such app. Rather
than a field of games naming a kind it does not own, or a URL it could not
check, each app registers here, from its `AppConfig.ready`, a read that
tells its own games apart and describes them. A page asks once for all the
games it lists (the replay page, the player's page), and only about games of
no day.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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


# Each app's: the origins of those of `games` that are the app's, by game id.
Origin = Callable[[Sequence[Game]], dict[int, GameOrigin]]

_ORIGINS: dict[str, Origin] = {}


def game_origin_register(*, app: str, origin: Origin) -> None:
    """Register an app's read of its games' origin (again: replaces it)."""
    _ORIGINS[app] = origin


def game_origins(*, games: Sequence[Game]) -> dict[int, GameOrigin]:
    """Where each of `games` was played, by game id, for those an app claims: never a
    game of a day (ranked or practice, which the daily contest describes), nor a plain
    practice game. One read per app, however many games."""
    unclaimed = [game for game in games if game.daily_id is None]
    found: dict[int, GameOrigin] = {}
    for origin in _ORIGINS.values():
        if not unclaimed:
            break
        found.update(origin(unclaimed))
        unclaimed = [game for game in unclaimed if game.pk not in found]
    return found


def game_origin(*, game: Game) -> GameOrigin | None:
    """`game_origins` of one game."""
    return game_origins(games=[game]).get(game.pk)
