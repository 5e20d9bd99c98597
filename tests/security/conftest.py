"""Fixtures of the hardening tests: today's deal pinned to a deal with a known
win in the shared vectors, players with API tokens, and the error-shape check."""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from games.models import DailyDeal
from tests.paths import GAME_VECTORS

VECTORS = GAME_VECTORS
PASSWORD = "a-long-passphrase-for-tests"


def _won_game() -> dict[str, Any]:
    games = [json.loads(line) for line in VECTORS.read_text().splitlines() if line.strip()]
    return next(g for g in games if g.get("won") and "refused_at" not in g)


WON = _won_game()
WON_DEAL: str = WON["deal"]
WON_LOG: list[str] = WON["log"].split()


def asgi_http_scope(path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    """The ASGI scope of a POST to `path` with exactly these headers (and a Host)."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"testserver"), *headers],
        "client": ("127.0.0.1", 5000),
        "server": ("testserver", 80),
    }


def assert_error_shape(body: Any) -> dict[str, Any]:
    """The documented refusal shape: `{"error": {"code": str, "message": str, ...}}`."""
    assert isinstance(body, dict) and set(body) == {"error"}, body
    error = body["error"]
    assert isinstance(error.get("code"), str) and error["code"], body
    assert isinstance(error.get("message"), str) and error["message"], body
    return error


@pytest.fixture(autouse=True)
def _no_solver(settings: Any) -> None:
    # Choosing a day's deal must not wait for the solver in these tests.
    settings.DAILY_DEAL_REQUIRE_WIN = False


@pytest.fixture
def today() -> datetime.date:
    return timezone.now().date()


@pytest.fixture
def daily(db: None, today: datetime.date) -> DailyDeal:
    """Today's deal, pinned to the deal of a known won game."""
    from games.rules import Deal

    return DailyDeal.objects.create(date=today, number=Deal.from_code(WON_DEAL).number)


@pytest.fixture
def make_player(db: None) -> Callable[[str], AbstractBaseUser]:
    def make(username: str, **extra: Any) -> AbstractBaseUser:
        return get_user_model().objects.create_user(username=username, password=PASSWORD, **extra)

    return make


@pytest.fixture
def player(make_player: Callable[..., AbstractBaseUser]) -> AbstractBaseUser:
    return make_player("alice")


@pytest.fixture
def token(player: AbstractBaseUser) -> str:
    return Token.objects.create(user=player).key


@pytest.fixture
def api(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client
