"""Fixtures of the page tests: today's deal pinned to deal 4, players, stored games.

Deal 4 (`EH1-N-AAAAAAE`) has a clean win in the conformance vectors, so the
tests can store real won and unfinished games of the day.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.utils import timezone

from games.models import DailyDeal, Game
from games.services import game_submit

VECTORS = Path(__file__).resolve().parent.parent / "vectors" / "games.jsonl"
DEAL = "EH1-N-AAAAAAE"
DEAL_NUMBER = 4
PASSWORD = "a-long-passphrase"


def _vectors() -> list[dict[str, Any]]:
    return [json.loads(line) for line in VECTORS.read_text().splitlines() if line.strip()]


VECTOR_GAMES = _vectors()
WIN = next(v for v in VECTOR_GAMES if v["deal"] == DEAL and v.get("won"))
WIN_LOG: list[str] = WIN["log"].split()


@pytest.fixture
def today() -> datetime.date:
    return timezone.now().date()


@pytest.fixture
def daily(db: None, today: datetime.date) -> DailyDeal:
    """Today's deal, pinned to deal 4."""
    return DailyDeal.objects.create(date=today, number=DEAL_NUMBER)


@pytest.fixture
def make_player(db: None) -> Callable[[str], AbstractBaseUser]:
    def make(username: str) -> AbstractBaseUser:
        return get_user_model().objects.create_user(username=username, password=PASSWORD)

    return make


@pytest.fixture
def submit() -> Callable[..., Game]:
    """Store a game through the service, as the API would."""

    def play(player: AbstractBaseUser, log: list[str] | str, deal: str = DEAL) -> Game:
        game, _created = game_submit(player=player, deal=deal, log=log)
        return game

    return play
