"""The costs a visitor can trigger (replays built, hints, share pictures drawn) are
limited per client address as well as per player: many accounts behind one
address draw on one allowance (`easyharp_site.throttling`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import time_machine
from django.core.cache import cache

from easyharp_site.throttling import local_counters_clear
from tests.fixtures import DEAL, client_for

pytestmark = pytest.mark.django_db

ELSEWHERE = "198.51.100.20"


@pytest.fixture(autouse=True)
def _fresh_counters() -> Iterator[None]:
    cache.clear()
    local_counters_clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _early_in_a_minute() -> Iterator[None]:
    """The limits count in windows aligned on the clock's minutes: each test starts
    a second into one, so that no window ends between its requests."""
    now = time.time()
    with time_machine.travel(now - now % 60 + 1, tick=True):
        yield


def rates(settings: Any, **scopes: str) -> None:
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {**rest["DEFAULT_THROTTLE_RATES"], **scopes}
    settings.REST_FRAMEWORK = rest


def test_share_pictures_drawn_by_many_accounts_of_one_address_share_its_allowance(
    make_player: Any, settings: Any
) -> None:
    rates(settings, card="30/min", card_address="2/min")
    players = [make_player(name) for name in ("ann", "ben", "cat", "dan")]

    drawn = [
        client_for(player).get(f"/cards/players/{player.get_username()}.png").status_code
        for player in players[:3]
    ]
    elsewhere = client_for(players[3]).get(
        f"/cards/players/{players[3].get_username()}.png", REMOTE_ADDR=ELSEWHERE
    )

    assert drawn == [200, 200, 429]
    assert elsewhere.status_code == 200


def test_hints_of_many_accounts_of_one_address_share_its_allowance(
    alice: Any, bob: Any, settings: Any
) -> None:
    rates(settings, hint="30/min", hint_address="1/min")
    body = {"deal": DEAL, "log": ""}

    first = client_for(alice).post("/api/hint/", body, format="json")
    second = client_for(bob).post("/api/hint/", body, format="json")
    elsewhere = client_for(bob).post("/api/hint/", body, format="json", REMOTE_ADDR=ELSEWHERE)

    assert first.status_code == 200
    assert second.status_code == 429
    assert second.json()["error"]["code"] == "throttled"
    assert elsewhere.status_code == 200


def test_a_player_keeps_their_own_limit_below_the_addresss(alice: Any, settings: Any) -> None:
    rates(settings, hint="1/min", hint_address="60/min")
    body = {"deal": DEAL, "log": ""}

    statuses = [client_for(alice).post("/api/hint/", body, format="json").status_code
                for _ in range(2)]  # fmt: skip

    assert statuses == [200, 429]
