"""A ranked game held for review is shown as held to its own player only: in the
game's API output, the player's API and page, and the replay page."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from games.models import Game, ReviewState
from tests.fixtures import WIN_LOG, client_for, close_day, submit_ranked

pytestmark = pytest.mark.django_db


@pytest.fixture
def held(alice, daily) -> Game:
    """Alice's ranked game of today, held for review."""
    answer = submit_ranked(client_for(alice), WIN_LOG).json()
    Game.objects.filter(pk=answer["id"]).update(review_state=ReviewState.HELD)
    return Game.objects.get(pk=answer["id"])


def page_for(player) -> Client:
    client = Client()
    if player is not None:
        client.force_login(player)
    return client


def test_the_game_api_says_held_to_its_player_only(held, alice, bob, anon):
    assert client_for(alice).get(f"/api/games/{held.pk}/").json()["held"] is True
    submit_ranked(client_for(bob), WIN_LOG[:10])  # bob has played: the day's games open to him
    assert client_for(bob).get(f"/api/games/{held.pk}/").json()["held"] is False
    close_day(held.daily)  # and to everyone once the day has closed
    assert anon.get(f"/api/games/{held.pk}/").json()["held"] is False


def test_a_game_not_held_is_not_said_held_even_to_its_player(alice, daily):
    answer = submit_ranked(client_for(alice), WIN_LOG).json()

    assert answer["held"] is False
    assert client_for(alice).get(f"/api/games/{answer['id']}/").json()["held"] is False


def test_the_players_api_lists_the_held_game_and_day_for_the_player_only(held, alice, bob, anon):
    mine = client_for(alice).get("/api/players/alice/").json()
    theirs = client_for(bob).get("/api/players/alice/").json()
    anonymous = anon.get("/api/players/alice/").json()

    assert [game["held"] for game in mine["games"]] == [True]
    assert [day["held"] for day in mine["daily"]] == [True]
    for body in (theirs, anonymous):
        assert [game["held"] for game in body["games"]] == [False]
        assert all(not day["held"] for day in body["daily"])


def test_the_player_page_shows_held_to_the_player_only(held, alice, bob):
    mine = page_for(alice).get("/players/alice/").content.decode()
    theirs = page_for(bob).get("/players/alice/").content.decode()
    anonymous = page_for(None).get("/players/alice/").content.decode()

    # Once in the daily results, once in the games.
    assert len(re.findall(r'class="badge held"', mine)) == 2
    assert "held for review" in mine
    for body in (theirs, anonymous):
        assert "held for review" not in body


def test_the_replay_page_shows_held_to_the_player_only(held, alice, bob):
    mine = page_for(alice).get(f"/replays/{held.pk}/").content.decode()
    theirs = page_for(bob).get(f"/replays/{held.pk}/").content.decode()

    assert 'id="held-mark"' in mine
    assert 'id="held-note"' in mine and "once a moderator has looked at it" in mine
    assert 'id="held-note"' not in theirs and 'id="held-mark"' not in theirs


def test_the_player_page_says_held_in_spanish_and_dutch(held, alice):
    for language, word in (("es", "retenida para revisión"), ("nl", "vastgehouden voor controle")):
        body = page_for(alice).get("/players/alice/", HTTP_ACCEPT_LANGUAGE=language)
        assert word in body.content.decode()
