"""Fixtures of the page tests: the suite's (`tests.fixtures`), plus stored games.

Today's deal is pinned to deal 4 (`EH1-N-AAAAAAE`), which has a clean win in
the conformance vectors, so the tests can store real won and unfinished games
of the day.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.base_user import AbstractBaseUser

from games.models import Game
from games.services import game_submit
from tests.fixtures import DEAL

# The password `make_player` gives every player.
PASSWORD = "a-long-passphrase"


@pytest.fixture
def submit() -> Callable[..., Game]:
    """Store a game through the service, as the API would."""

    def play(player: AbstractBaseUser, log: list[str] | str, deal: str = DEAL) -> Game:
        game, _created = game_submit(player=player, deal=deal, log=log)
        return game

    return play
