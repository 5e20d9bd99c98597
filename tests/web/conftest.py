"""Fixtures of the page tests: those of the service tests, plus stored games.

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
from tests.games.conftest import (  # noqa: F401 - fixtures shared with the service tests
    DEAL,
    DEAL_NUMBER,
    PASSWORD,
    WIN,
    WIN_LOG,
    daily,
    make_player,
    today,
)


@pytest.fixture
def submit() -> Callable[..., Game]:
    """Store a game through the services, as the API would: the player's ranked
    game of today the first time (the attempt started just before), then practice."""

    def play(player: AbstractBaseUser, log: list[str] | str, deal: str = DEAL) -> Game:
        attempt_start(player=player, date=timezone.now().date())
        game, _created = game_submit(player=player, deal=deal, log=log)
        return game

    return play
