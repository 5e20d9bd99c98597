"""Where a game of no day was played, as the app above games that stored it says (a
race's game): its replay page names it and links to it.

A game of no day (`game_store(no_day=True)`) is stored by an app that games
may not import (`.importlinter`: races sits above games), so the Game row
cannot say what it belongs to without games knowing every such app. Rather
than a field of games naming a kind it does not own, or a URL it could not
check, the pages that list games (the replay page, the player's page) are
handed a read of the games' origins (`Origins`) by the site's wiring
(`easyharp_site/urls.py` passes `races.selectors.race_game_origins` to
`leaderboards.urls.board_urls`), and ask it once for all the games they list,
and only about games of no day.
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


# A read of the origins of those of `games` an app stored, by game id.
Origins = Callable[[Sequence[Game]], dict[int, GameOrigin]]


def no_origins(games: Sequence[Game]) -> dict[int, GameOrigin]:
    """The origins where no app says any: none."""
    return {}


def game_origins(*, games: Sequence[Game], origins: Origins) -> dict[int, GameOrigin]:
    """Where each of `games` was played, by game id, as `origins` says: never a game of
    a day (ranked or practice, which the daily contest describes). One read,
    however many games."""
    unclaimed = [game for game in games if game.daily_id is None]
    return origins(unclaimed) if unclaimed else {}
