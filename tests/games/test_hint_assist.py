"""A hint during the player's open ranked attempt takes its game off the board."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from games.models import Attempt, Game
from leaderboards.models import BoardEntry
from tests.fixtures import DEAL, WIN_LOG, attempt_url, client_for, start, submit, submit_ranked

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _quick_hints(settings):
    # The solver's answer is not the point here: a hint asked is a hint.
    settings.HINT_SOLVER_SECONDS = 1e-9


def hint(client: APIClient, deal: str = DEAL, log: object = "S") -> object:
    return client.post("/api/hint/", {"deal": deal, "log": log}, format="json")


def test_a_hint_during_the_open_attempt_marks_it_assisted(alice, daily):
    start(client_for(alice))

    response = hint(client_for(alice))

    assert response.status_code == 200
    assert response.json()["assisted"] is True
    assert client_for(alice).get(attempt_url()).json()["assisted"] is True


def test_the_assisted_game_is_stored_and_shown_with_the_mark_and_on_no_board(anon, alice, daily):
    start(client_for(alice))
    hint(client_for(alice))

    game = submit(client_for(alice), WIN_LOG).json()

    assert (game["ranked"], game["assisted"], game["won"]) == (True, True, True)
    assert game["duration_ms"] is not None
    assert client_for(alice).get(f"/api/games/{game['id']}/").json()["assisted"] is True
    assert not BoardEntry.objects.exists()
    page = anon.get(f"/api/daily/{daily.date.isoformat()}/leaderboard/").json()
    assert page["total"] == 0
    # It was the attempt's game: the next one is practice, not a second chance.
    again = submit(client_for(alice), WIN_LOG).json()
    assert (again["ranked"], again["assisted"]) == (False, False)


def test_a_hint_before_the_attempt_is_refused_and_after_it_changes_nothing(alice, daily):
    before = hint(client_for(alice))
    game = submit_ranked(client_for(alice), WIN_LOG[:20]).json()
    after = hint(client_for(alice))

    # Before the attempt, a hint on the day's deal would be its answer for free.
    assert before.status_code == 403
    assert before.json()["error"]["code"] == "replay_locked"
    assert after.status_code == 200
    assert after.json()["assisted"] is False
    assert Game.objects.get(pk=game["id"]).assisted is False
    assert BoardEntry.objects.filter(game_id=game["id"]).exists()


def test_a_hint_on_another_deal_or_without_credentials_changes_nothing(anon, alice, daily):
    start(client_for(alice))

    other = hint(client_for(alice), deal="EH1-N-AAAAAAB")
    anonymous = hint(anon)
    anonymous_other = hint(anon, deal="EH1-N-AAAAAAB")

    assert other.json()["assisted"] is anonymous_other.json()["assisted"] is False
    # Nobody without an attempt gets hints on the day's deal while it runs.
    assert anonymous.status_code == 403
    assert anonymous.json()["error"]["code"] == "replay_locked"
    assert Attempt.objects.get().assisted is False


def test_a_refused_hint_does_not_mark_the_attempt(alice, daily):
    start(client_for(alice))

    response = hint(client_for(alice), log="S X9")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "illegal_action"
    assert Attempt.objects.get().assisted is False


def test_a_session_player_is_marked_too(alice, daily):
    session = APIClient()
    session.force_login(alice)
    session.post(attempt_url())

    response = hint(session)

    assert response.json()["assisted"] is True
    assert Attempt.objects.get().assisted is True
