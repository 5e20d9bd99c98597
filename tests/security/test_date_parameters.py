"""Every date a client can write, down to 0001-01-01 and up to 9999-12-31, is answered:
a date query parameter the API cannot serve is a 400 in the error shape, a date in a
path or on a page a 404, never a 500."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from leagues.models import League
from tests.fixtures import client_for
from tests.security.conftest import assert_error_shape

pytestmark = pytest.mark.django_db

EDGES = ["9999-12-31", "9999-12-27", "9999-12-26", "0001-01-01", "0001-01-02"]
FUTURE = ["9999-12-31", "9999-12-27", "2999-01-01"]


@pytest.fixture
def league(player: Any) -> League:
    answer = client_for(player).post("/api/leagues/", {"name": "Dates"}, format="json")
    assert answer.status_code == 201
    return League.objects.get(slug=answer.json()["slug"])


@pytest.mark.parametrize("period", ["week", "month"])
@pytest.mark.parametrize("day", FUTURE)
def test_standings_of_a_day_to_come_are_a_400_in_the_error_shape(
    player: Any, league: League, day: str, period: str
) -> None:
    for path in ("/api/standings/", f"/api/leagues/{league.slug}/standings/"):
        answer = client_for(player).get(path, {"at": day, "period": period})
        assert answer.status_code == 400, (path, day)
        error = assert_error_shape(answer.json())
        assert "at" in error["fields"]


@pytest.mark.parametrize("day", ["0001-01-01", "0001-01-02", "2026-01-01"])
def test_standings_of_a_past_day_are_answered(player: Any, league: League, day: str) -> None:
    for path in ("/api/standings/", f"/api/leagues/{league.slug}/standings/"):
        for period in ("week", "month"):
            answer = client_for(player).get(path, {"at": day, "period": period})
            assert answer.status_code == 200, (path, day, period)


@pytest.mark.parametrize("day", EDGES)
def test_dates_in_paths_and_pages_are_never_a_500(player: Any, league: League, day: str) -> None:
    signed_in = client_for(player)
    signed_in.force_login(player)
    paths = [
        f"/api/daily/{day}/",
        f"/api/daily/{day}/leaderboard/",
        f"/api/daily/{day}/results/",
        f"/api/daily/{day}/attempt/",
        f"/api/leagues/{league.slug}/daily/{day}/leaderboard/",
        f"/leaderboard/{day}/",
        f"/cards/days/{day}.png",
        f"/archive/{day[:7]}/",
        f"/standings/?at={day}",
        f"/standings/?at={day}&period=month",
        f"/leagues/{league.slug}/?date={day}",
    ]
    for path in paths:
        answer = signed_in.get(path)
        assert answer.status_code in (200, 400, 404), (path, answer.status_code)
    assert Client().get(f"/cards/days/{day}.png").status_code in (200, 404)
