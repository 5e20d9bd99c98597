"""Password guessing is slowed without handing anyone a way to lock a player out.

Guesses count per address, per (username, address) and per username from
everywhere but the player's known devices: browsers the player signed in on
before, named in a signed cookie (easyharp_site/devices.py), which count per
device instead.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from easyharp_site import throttling
from easyharp_site.devices import COOKIE
from tests.security.conftest import PASSWORD

OWNER_HOME = "10.1.0.1"
ATTACKER = "10.9.9.9"


@pytest.fixture
def mid_hour(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The limits' clock stopped in the middle of an hour (and of a minute), so that
    no fixed window ends during the test and a count is a count per hour."""
    monkeypatch.setattr(throttling, "time", SimpleNamespace(time=lambda: 1_800_000_000 + 1830.0))
    yield


def sign_in(client: Client, password: str, address: str, username: str = "alice") -> int:
    body = json.dumps({"username": username, "password": password})
    response = client.post(
        "/api/auth/token/", body, content_type="application/json", REMOTE_ADDR=address
    )
    return response.status_code


def known_device(address: str = OWNER_HOME) -> Client:
    """The player's own browser: signed in once (with the session form of the API)."""
    browser = Client()
    body = json.dumps({"username": "alice", "password": PASSWORD})
    answer = browser.post(
        "/api/auth/login/", body, content_type="application/json", REMOTE_ADDR=address
    )
    assert answer.status_code == 200
    assert COOKIE in answer.cookies
    return browser


def guesses_from_many_addresses(count: int) -> Counter[int]:
    return Counter(
        sign_in(Client(), f"guess-{i}", f"10.{50 + i // 250}.{i % 250}.1") for i in range(count)
    )


@pytest.mark.django_db
def test_guesses_from_one_address_at_one_player_are_20_an_hour(player: Any, mid_hour: None) -> None:
    attacker = Client()
    statuses = Counter(sign_in(attacker, f"guess-{i}", ATTACKER) for i in range(60))
    assert statuses == Counter({401: 20, 429: 40})


@pytest.mark.django_db
def test_guesses_from_many_addresses_at_one_player_are_60_an_hour(
    player: Any, mid_hour: None
) -> None:
    assert guesses_from_many_addresses(80) == Counter({401: 60, 429: 20})


@pytest.mark.django_db
def test_the_player_signs_in_from_a_known_device_while_many_addresses_guess(
    player: Any, mid_hour: None
) -> None:
    browser = known_device()
    guesses_from_many_addresses(80)
    assert sign_in(browser, PASSWORD, OWNER_HOME) == 200
    # From another address too (a phone that moved from home to a café).
    assert sign_in(browser, PASSWORD, "10.2.0.7") == 200
    # A new browser waits for the hour to end: the price of slowing the guesses.
    assert sign_in(Client(), PASSWORD, "10.2.0.8") == 429


@pytest.mark.django_db
def test_a_known_device_of_another_player_or_a_forged_cookie_counts_as_unknown(
    player: Any, make_player: Any, mid_hour: None
) -> None:
    make_player("mallory")
    mallory = Client()
    assert sign_in(mallory, PASSWORD, ATTACKER, username="mallory") == 200
    guesses_from_many_addresses(60)
    # Mallory's browser is a known device of mallory's, not of alice's.
    assert sign_in(mallory, "guess", ATTACKER) == 429
    forged = Client()
    forged.cookies[COOKIE] = "eyJkZXZpY2UiOiJ4IiwibmFtZXMiOltdfQ:forged"
    assert sign_in(forged, "guess", "10.3.0.1") == 429


@pytest.mark.django_db
def test_a_known_device_has_an_allowance_of_its_own(player: Any, mid_hour: None) -> None:
    browser = known_device()
    statuses = Counter(sign_in(browser, f"guess-{i}", f"10.4.0.{i}") for i in range(25))
    assert statuses == Counter({401: 20, 429: 5})


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_parallel_burst_of_wrong_passwords_locks_nobody_out(player: Any) -> None:
    """The attack of issue 26: 45 wrong passwords at once for one username."""
    assert settings.CACHES["default"]["BACKEND"].endswith("RedisCache")
    browser = known_device()
    start = threading.Barrier(45)

    def guess(i: int) -> int:
        client = Client()
        start.wait()
        try:
            return sign_in(client, f"guess-{i}", ATTACKER)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=45) as pool:
        statuses = Counter(pool.map(guess, range(45)))
    # At most 20 an hour from one address (two if the burst straddles an hour).
    assert statuses[401] <= 40
    assert statuses[401] + statuses[429] == 45
    # The player, at home, from their known browser and from a new one.
    assert sign_in(browser, PASSWORD, OWNER_HOME) == 200
    assert sign_in(Client(), PASSWORD, OWNER_HOME) == 200
