"""What one player may store: practice games and actions per UTC day (429 past either,
until midnight; the ranked game of the day is never refused), and races created
per player (the `race` rate)."""

from __future__ import annotations

import datetime
from types import SimpleNamespace
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from easyharp_site import throttling
from games.models import DailyDeal, Game
from games.rules import Deal
from races.models import Race
from tests.fixtures import DEAL, WIN_LOG, client_for, submit, submit_ranked
from tests.security.conftest import assert_error_shape

pytestmark = pytest.mark.django_db

OTHER_DEAL = "EH1-N-AAAAAAB"
NOON = datetime.time(12)


@pytest.fixture
def noon(monkeypatch: pytest.MonkeyPatch) -> datetime.datetime:
    """The clock stopped at noon (UTC) of today: no day ends during the test."""
    moment = datetime.datetime.combine(timezone.now().date(), NOON, tzinfo=datetime.UTC)
    monkeypatch.setattr(timezone, "now", lambda: moment)
    return moment


def practice(client: Any, log: list[str]) -> Any:
    return submit(client, log, deal=OTHER_DEAL)


def test_practice_games_past_the_days_ceiling_are_refused_until_midnight(
    alice: Any, noon: datetime.datetime, settings: Any
) -> None:
    settings.PLAYER_GAMES_PER_DAY = 3
    client = client_for(alice)

    stored = [practice(client, ["S", "S"]).status_code for _ in range(3)]
    refused = practice(client, ["S"])

    assert stored == [201, 201, 201]
    assert refused.status_code == 429
    error = assert_error_shape(refused.json())
    assert error["code"] == "too_many_games"
    assert error["limit"] == 3
    assert error["wait"] == 12 * 3600 == int(refused["Retry-After"])
    assert Game.objects.filter(player=alice).count() == 3


def test_actions_past_the_days_ceiling_are_refused_counting_the_new_game(
    alice: Any, noon: datetime.datetime, settings: Any
) -> None:
    settings.PLAYER_ACTIONS_PER_DAY = 5
    client = client_for(alice)

    assert practice(client, ["S", "S"]).status_code == 201
    assert practice(client, ["S", "S", "S"]).status_code == 201
    refused = practice(client, ["S"])

    assert refused.status_code == 429
    error = assert_error_shape(refused.json())
    assert (error["code"], error["limit"]) == ("too_many_actions", 5)
    assert sum(Game.objects.filter(player=alice).values_list("actions", flat=True)) == 5


def test_the_ceiling_is_the_players_own_and_a_retry_of_a_stored_game_is_answered(
    alice: Any, bob: Any, noon: datetime.datetime, settings: Any
) -> None:
    settings.PLAYER_GAMES_PER_DAY = 1
    first = submit(client_for(alice), ["S"], deal=OTHER_DEAL, HTTP_IDEMPOTENCY_KEY="k1")

    again = submit(client_for(alice), ["S"], deal=OTHER_DEAL, HTTP_IDEMPOTENCY_KEY="k1")

    assert (first.status_code, again.status_code) == (201, 200)
    assert practice(client_for(bob), ["S"]).status_code == 201


def test_the_ranked_game_of_the_day_is_stored_past_the_ceilings(
    alice: Any, noon: datetime.datetime, settings: Any
) -> None:
    DailyDeal.objects.create(date=noon.date(), number=Deal.from_code(DEAL).number)
    settings.PLAYER_GAMES_PER_DAY = 1
    settings.PLAYER_ACTIONS_PER_DAY = 2
    client = client_for(alice)
    assert practice(client, ["S", "S"]).status_code == 201
    assert practice(client, ["S"]).status_code == 429

    ranked = submit_ranked(client, WIN_LOG)

    assert ranked.status_code == 201, ranked.content
    assert ranked.json()["ranked"] is True


@pytest.fixture
def race_rate(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two races an hour, the limits' clock stopped mid-hour."""
    monkeypatch.setattr(throttling, "time", SimpleNamespace(time=lambda: 1_800_000_000 + 1830.0))
    rates = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**rates, "race": "2/hour"},
    }


def test_races_created_past_the_rate_are_refused(alice: Any, bob: Any, race_rate: None) -> None:
    client = client_for(alice)

    created = [client.post("/api/races/", {"minutes": 5}, format="json") for _ in range(2)]
    refused = client.post("/api/races/", {"minutes": 5}, format="json")

    assert [answer.status_code for answer in created] == [201, 201]
    assert refused.status_code == 429
    error = assert_error_shape(refused.json())
    assert error["code"] == "throttled" and error["wait"] >= 1
    assert int(refused["Retry-After"]) == error["wait"]
    assert Race.objects.filter(host=alice).count() == 2
    # Another player's allowance is their own.
    assert client_for(bob).post("/api/races/", {"minutes": 5}, format="json").status_code == 201


def test_the_races_page_says_so_in_the_readers_language(alice: Any, race_rate: None) -> None:
    browser = Client(headers={"accept-language": "es"})
    browser.force_login(alice)
    for _ in range(2):
        assert browser.post("/races/", {"minutes": 5}).status_code == 302

    page = browser.post("/races/", {"minutes": 5}, follow=True).content.decode()

    assert "Has creado muchas carreras" in page
    assert Race.objects.filter(host=alice).count() == 2
