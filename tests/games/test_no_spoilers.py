"""No spoilers while a day runs: the games of a running day's deal (ranked and
practice), their replays, the pages that link them and the hints on the deal
reach only their player and the players who have finished their ranked game of
that day, until the day closes (docs/FAIR_PLAY.md)."""

from __future__ import annotations

import datetime

import pytest
from django.test import Client

from games.models import DailyDeal
from tests.fixtures import (
    DEAL,
    WIN_LOG,
    client_for,
    close_day,
    start,
    submit,
    submit_ranked,
)

pytestmark = pytest.mark.django_db

LOG_PATHS = ("/api/games/{}/", "/api/games/{}/replay/")
LOCK_TEXT = "Replays of today's games open once you have played, or at 00:00 UTC."


@pytest.fixture
def leader(alice, daily) -> int:
    """alice's winning ranked game of today: the line everyone would like to copy."""
    return submit_ranked(client_for(alice), WIN_LOG).json()["id"]


def assert_locked(response, daily: DailyDeal) -> None:
    assert response.status_code == 403
    error = response.json()["error"]
    assert error["code"] == "replay_locked"
    assert error["date"] == daily.date.isoformat()
    assert error["opens_at"] == f"{(daily.date + datetime.timedelta(days=1)).isoformat()}T00:00:00Z"
    assert "log" not in response.json()


@pytest.mark.parametrize("path", LOG_PATHS)
def test_a_visitor_gets_no_log_of_the_running_day(anon, leader, daily, path):
    assert_locked(anon.get(path.format(leader)), daily)


@pytest.mark.parametrize("path", LOG_PATHS)
def test_a_player_who_has_not_played_gets_none_nor_one_whose_attempt_is_open(
    bob, leader, daily, path
):
    assert_locked(client_for(bob).get(path.format(leader)), daily)
    start(client_for(bob))
    assert_locked(client_for(bob).get(path.format(leader)), daily)


@pytest.mark.parametrize("path", LOG_PATHS)
def test_the_player_always_sees_their_own_game(alice, leader, path):
    response = client_for(alice).get(path.format(leader))

    assert response.status_code == 200


@pytest.mark.parametrize("log", [WIN_LOG, WIN_LOG[:15]], ids=["won", "given-up"])
def test_a_player_who_has_finished_their_ranked_game_sees_the_day_s_games(bob, leader, log):
    submit_ranked(client_for(bob), log)

    detail = client_for(bob).get(f"/api/games/{leader}/")
    replay = client_for(bob).get(f"/api/games/{leader}/replay/")

    assert detail.status_code == replay.status_code == 200
    assert detail.json()["log"].split() == WIN_LOG
    # Served to this viewer only: no shared cache may keep it for another.
    assert replay["Cache-Control"] == "private, no-store"


def test_practice_games_of_the_day_s_deal_are_locked_too(anon, bob, alice, daily):
    body = {"deal": DEAL, "log": " ".join(WIN_LOG), "practice": True}
    practice = client_for(alice).post("/api/games/", body, format="json").json()
    assert practice["ranked"] is False

    assert_locked(anon.get(f"/api/games/{practice['id']}/"), daily)
    assert_locked(client_for(bob).get(f"/api/games/{practice['id']}/replay/"), daily)


def test_everything_opens_to_everyone_once_the_day_has_closed(anon, leader, daily):
    close_day(daily)

    detail = anon.get(f"/api/games/{leader}/")
    replay = anon.get(f"/api/games/{leader}/replay/")

    assert detail.status_code == replay.status_code == 200
    assert replay["Cache-Control"] == "public, max-age=86400"
    assert Client().get(f"/replays/{leader}/").status_code == 200


def test_games_of_other_deals_stay_public(anon, alice, daily):
    other = submit(client_for(alice), ["S", "W9", "S"], deal="EH1-N-AAAAAAB").json()["id"]

    assert anon.get(f"/api/games/{other}/").status_code == 200


def test_a_game_of_tomorrow_s_deal_is_locked_for_all_but_its_player(anon, alice, bob, daily):
    # The deal numbers of the days ahead are secret, but a game of one could be played
    # by chance: it would be that day's answer.
    DailyDeal.objects.create(date=daily.date + datetime.timedelta(days=1), number=5)
    game = submit(client_for(alice), ["S", "S"], deal="EH1-N-AAAAAAF").json()["id"]
    submit_ranked(client_for(bob), WIN_LOG[:10])  # bob finished today, not tomorrow

    response = client_for(bob).get(f"/api/games/{game}/")

    assert response.status_code == 403
    assert_names_no_day(response.json(), daily.date + datetime.timedelta(days=1))
    assert client_for(alice).get(f"/api/games/{game}/").status_code == 200


def assert_names_no_day(body: dict, date: datetime.date) -> None:
    """A refusal about a day prepared ahead says neither its date nor when it opens."""
    error = body["error"]
    assert error["code"] == "replay_locked"
    assert set(error) == {"code", "message"}
    assert date.isoformat() not in error["message"]


def test_a_hint_on_tomorrow_s_deal_names_no_day(anon, bob, daily, settings):
    tomorrow = daily.date + datetime.timedelta(days=1)
    DailyDeal.objects.create(date=tomorrow, number=5)
    body = {"deal": "EH1-N-AAAAAAF", "log": ""}

    for client in (anon, client_for(bob)):
        response = client.post("/api/hint/", body, format="json")
        assert response.status_code == 403
        assert_names_no_day(response.json(), tomorrow)


def test_the_replay_page_of_a_game_of_tomorrow_s_deal_names_no_day(alice, daily):
    tomorrow = daily.date + datetime.timedelta(days=1)
    DailyDeal.objects.create(date=tomorrow, number=5)
    game = submit(client_for(alice), ["S", "S"], deal="EH1-N-AAAAAAF").json()["id"]

    page = Client().get(f"/replays/{game}/")

    assert page.status_code == 403
    text = page.content.decode()
    assert "The moves of this game are not shown yet." in text
    assert tomorrow.isoformat() not in text
    assert "/leaderboard/" not in text.split("replay-locked", 1)[1]


def test_the_replay_page_says_when_it_opens_in_the_reader_s_language(leader):
    english = Client().get(f"/replays/{leader}/")
    spanish = Client(headers={"accept-language": "es"}).get(f"/replays/{leader}/")
    dutch = Client(headers={"accept-language": "nl"}).get(f"/replays/{leader}/")

    assert english.status_code == spanish.status_code == dutch.status_code == 403
    assert LOCK_TEXT in english.content.decode()
    assert "00:00 UTC" in spanish.content.decode() and LOCK_TEXT not in spanish.content.decode()
    assert "00:00 UTC" in dutch.content.decode() and LOCK_TEXT not in dutch.content.decode()
    # The result stays visible; the moves do not reach the page.
    assert "replay_url" not in english.content.decode()


def test_the_board_shows_ranks_and_results_but_locks_the_replays(anon, bob, leader, daily):
    url = f"/api/daily/{daily.date.isoformat()}/leaderboard/"

    locked = anon.get(url).json()
    page = Client().get(f"/leaderboard/{daily.date.isoformat()}/").content.decode()

    assert locked["replays_locked"] is True
    assert locked["replays_open_at"].startswith(
        (daily.date + datetime.timedelta(days=1)).isoformat()
    )
    assert [(entry["rank"], entry["player"]) for entry in locked["entries"]] == [(1, "alice")]
    assert LOCK_TEXT in page
    assert f"/replays/{leader}/" not in page
    assert '>locked<span class="visually-hidden">' in page

    submit_ranked(client_for(bob), WIN_LOG[:30])
    assert client_for(bob).get(url).json()["replays_locked"] is False
    bob_page = Client()
    bob_page.force_login(bob)
    assert (
        f"/replays/{leader}/"
        in bob_page.get(f"/leaderboard/{daily.date.isoformat()}/").content.decode()
    )


def test_the_player_page_locks_the_replays_of_the_running_day(anon, leader, alice, daily):
    page = Client().get("/players/alice/").content.decode()
    own = Client()
    own.force_login(alice)

    assert f"/replays/{leader}/" not in page
    assert LOCK_TEXT in page
    assert f"/replays/{leader}/" in own.get("/players/alice/").content.decode()


def test_hints_on_the_running_day_s_deal_go_only_to_players_in_or_past_their_attempt(
    anon, bob, daily, settings
):
    settings.HINT_SOLVER_SECONDS = 1e-9
    body = {"deal": DEAL, "log": ""}

    assert_locked(anon.post("/api/hint/", body, format="json"), daily)
    assert_locked(client_for(bob).post("/api/hint/", body, format="json"), daily)
    start(client_for(bob))
    assert client_for(bob).post("/api/hint/", body, format="json").status_code == 200
