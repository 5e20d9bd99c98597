"""Fixtures of the page tests: the suite's (`tests.fixtures`), plus stored games.

Today's deal is pinned to deal 4 (`EH1-N-AAAAAAE`), which has a clean win in
the conformance vectors, so the tests can store real won and unfinished games
of the day.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.base_user import AbstractBaseUser
from django.utils import timezone

from games.models import Game
from games.services import attempt_start, game_submit
from tests.fixtures import DEAL, PASSWORD  # noqa: F401 - PASSWORD: imported by the page tests


@pytest.fixture
def submit() -> Callable[..., Game]:
    """Store a game through the services, as the API would: the player's ranked
    game of today the first time (the attempt started just before), then practice."""

    def play(player: AbstractBaseUser, log: list[str] | str, deal: str = DEAL) -> Game:
        attempt_start(player=player, date=timezone.now().date())
        game, _created = game_submit(player=player, deal=deal, log=log)
        return game

    return play
