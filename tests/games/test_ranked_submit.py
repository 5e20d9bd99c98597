"""POST /api/games/ under the fair contest: the open attempt's game is ranked, all else practice."""

from __future__ import annotations

import datetime

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from easyharp_site.errors import ServiceError
from games.models import Attempt, DailyDeal, Game
from games.services import attempt_start
from leaderboards.models import BoardEntry
from leaderboards.selectors import leaderboard_page
from ranking.actions import game_submit
from tests.fixtures import (
    DEAL,
    WIN_LOG,
    client_for,
    close_day,
    rewind,
    start,
    submit,
    submit_ranked,
)

pytestmark = pytest.mark.django_db

OTHER_DEAL = "EH1-N-AAAAAAB"


def entries(daily: DailyDeal, order: str = "score") -> list[tuple[str, int]]:
    page = leaderboard_page(date=daily.date, order=order)
    return [(entry["player"], entry["game"]) for entry in page["entries"]]


def test_the_game_of_the_open_attempt_is_ranked_and_closes_it(alice, daily):
    start(client_for(alice))
    rewind(alice, 300)

    response = submit(client_for(alice), WIN_LOG)

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["ranked"], body["assisted"], body["won"]) == (True, False, True)
    # Measured by the server from the attempt's start to the submission.
    assert 300_000 <= body["duration_ms"] < 360_000
    attempt = Attempt.objects.get()
    assert (attempt.status, attempt.game.pk) == ("closed", body["id"])
    assert attempt.closed_at == Game.objects.get(pk=body["id"]).created_at
    assert entries(daily) == entries(daily, "moves") == [("alice", body["id"])]


def test_an_unfinished_game_may_be_submitted_to_give_up(alice, daily):
    response = submit_ranked(client_for(alice), WIN_LOG[:30])

    body = response.json()
    assert (body["ranked"], body["won"]) == (True, False)
    assert Attempt.objects.get().status == "closed"
    assert entries(daily) == [("alice", body["id"])]
    assert entries(daily, "moves") == []


def test_a_second_game_of_the_days_deal_is_practice(alice, daily):
    ranked = submit_ranked(client_for(alice), WIN_LOG[:30]).json()

    second = submit(client_for(alice), WIN_LOG).json()

    assert (second["ranked"], second["assisted"], second["duration_ms"]) == (False, False, None)
    assert second["daily"] == daily.date.isoformat()
    assert entries(daily) == [("alice", ranked["id"])]
    assert entries(daily, "moves") == []


def test_a_game_sent_as_practice_leaves_the_open_attempt_open(alice, daily):
    # A game begun offline, before the attempt's clock started, is sent as
    # practice: it must not become the ranked game of an attempt started since.
    start(client_for(alice))
    body = {"deal": DEAL, "log": " ".join(WIN_LOG), "practice": True}

    response = client_for(alice).post("/api/games/", body, format="json")

    assert response.status_code == 201, response.json()
    practice = response.json()
    assert (practice["ranked"], practice["won"], practice["duration_ms"]) == (False, True, None)
    assert Attempt.objects.get().status == "open"
    assert entries(daily) == []
    ranked = submit_ranked(client_for(alice), WIN_LOG[:30]).json()
    assert ranked["ranked"] is True
    assert entries(daily) == [("alice", ranked["id"])]


@pytest.mark.parametrize("practice", ["true", 1, "yes", None])
def test_practice_is_true_or_false_only(alice, daily, practice):
    start(client_for(alice))
    body = {"deal": DEAL, "log": " ".join(WIN_LOG), "practice": practice}

    response = client_for(alice).post("/api/games/", body, format="json")

    assert response.status_code == 400
    assert "practice" in response.json()["error"]["fields"]
    assert not Game.objects.exists()
    assert Attempt.objects.get().status == "open"


def test_a_game_with_no_attempt_started_is_practice(alice, daily):
    body = submit(client_for(alice), WIN_LOG).json()

    assert (body["ranked"], body["duration_ms"]) == (False, None)
    assert not Attempt.objects.exists()
    assert not BoardEntry.objects.exists()
    # Practice does not use up the attempt: starting it now still works.
    assert start(client_for(alice)).status_code == 201


def test_a_game_of_another_deal_is_practice_and_leaves_the_attempt_open(alice, daily):
    start(client_for(alice))

    body = submit(client_for(alice), "S", deal=OTHER_DEAL).json()

    assert (body["ranked"], body["daily"]) == (False, None)
    assert Attempt.objects.get().status == "open"
    ranked = submit(client_for(alice), WIN_LOG).json()
    assert ranked["ranked"] is True


def test_a_past_days_deal_is_practice_even_with_that_days_attempt_open(alice, daily):
    yesterday = DailyDeal.objects.create(
        date=daily.date - datetime.timedelta(days=1), number=daily.number + 1
    )
    Attempt.objects.create(player=alice, daily=yesterday, started_at=timezone.now())

    body = submit(client_for(alice), "S", deal=yesterday.deal_code).json()

    assert (body["ranked"], body["daily"]) == (False, None)
    assert Attempt.objects.get(daily=yesterday).status == "open"
    assert not BoardEntry.objects.exists()


def test_practice_games_are_stored_replayable_and_on_the_players_page(anon, alice, daily):
    practice = submit(client_for(alice), WIN_LOG[:12]).json()
    close_day(daily)  # a practice game of a running day's deal is no one else's to see

    page = anon.get("/api/players/alice/").json()

    assert anon.get(f"/api/games/{practice['id']}/").json()["ranked"] is False
    assert anon.get(f"/api/games/{practice['id']}/replay/").status_code == 200
    assert [(g["id"], g["ranked"]) for g in page["games"]] == [(practice["id"], False)]
    assert page["daily"] == []


def test_a_player_with_an_attempt_of_today_is_ranked_once_per_day(alice, bob, daily):
    alice_game = submit_ranked(client_for(alice), WIN_LOG).json()
    bob_game = submit_ranked(client_for(bob), WIN_LOG[:20]).json()

    assert alice_game["ranked"] and bob_game["ranked"]
    assert Game.objects.filter(ranked=True).count() == 2
    assert entries(daily) == [("alice", alice_game["id"]), ("bob", bob_game["id"])]


# --- Per-action times ----------------------------------------------------------------


def spaced(count: int, step: int = 400, first: int = 300) -> list[int]:
    return [first + step * index for index in range(count)]


def test_per_action_times_are_stored_with_the_ranked_game(alice, daily):
    start(client_for(alice))
    rewind(alice, 60)
    log = WIN_LOG[:40]
    times = [300, 800.9, *spaced(38, first=1200)]

    response = submit(client_for(alice), log, times=times)

    assert response.status_code == 201, response.json()
    game = Game.objects.get()
    # Whole milliseconds, fractions dropped.
    assert game.times == [300, 800, *spaced(38, first=1200)]


def test_practice_games_keep_no_times_but_refuse_bad_ones(alice, daily):
    good = submit(client_for(alice), WIN_LOG[:3], times=[100, 200, 300])
    bad = submit(client_for(alice), WIN_LOG[:3], times=[100, 50, 300])

    assert good.status_code == 201
    assert Game.objects.get().times is None
    assert bad.status_code == 400
    assert bad.json()["error"]["reason_code"] == "decreasing"


@pytest.mark.parametrize(
    ("times", "index", "reason_code"),
    [
        ([100, 200], None, "count"),
        ([100, 200, 300, 400], None, "count"),
        ([100, "200", 300], 2, "not_a_number"),
        ([100, True, 300], 2, "not_a_number"),
        ([100, None, 300], 2, "not_a_number"),
        ([-1, 200, 300], 1, "out_of_range"),
        ([100, 300, 200], 3, "decreasing"),
        ([100, 200, 10_000_000], 3, "after_submission"),
    ],
)
def test_bad_times_are_a_400_like_a_bad_log_and_store_nothing(
    alice, daily, times, index, reason_code
):
    start(client_for(alice))

    response = submit(client_for(alice), WIN_LOG[:3], times=times)

    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["index"], error["reason_code"]) == (
        "invalid_times",
        index,
        reason_code,
    )
    assert error["message"]
    assert not Game.objects.exists()
    # The attempt is still open: the refused submission changed nothing.
    assert Attempt.objects.get().status == "open"


def test_times_may_run_a_little_past_the_servers_measure(alice, daily, settings):
    settings.ATTEMPT_TIMES_ALLOWANCE_MS = 2_000
    start(client_for(alice))
    rewind(alice, 10)

    within = submit(client_for(alice), WIN_LOG[:2], times=[5_000, 11_500])

    assert within.status_code == 201, within.json()


def test_times_that_are_not_a_list_are_a_validation_error(alice, daily):
    start(client_for(alice))

    response = submit(client_for(alice), WIN_LOG[:2], times="100 200")

    assert response.status_code == 400
    assert "times" in response.json()["error"]["fields"]


# --- Bans ------------------------------------------------------------------------------


def test_a_player_banned_after_signing_in_can_no_longer_start_or_submit(alice, daily):
    # Signed in (this object) before the ban reached the database.
    get_user_model().objects.filter(pk=alice.pk).update(is_active=False)

    for call in (
        lambda: attempt_start(player=alice, date=daily.date),
        lambda: game_submit(player=alice, deal=DEAL, log=WIN_LOG),
    ):
        with pytest.raises(ServiceError) as refused:
            call()
        assert (refused.value.code, refused.value.status_code) == ("player_banned", 403)
    assert not Game.objects.exists()
    assert not Attempt.objects.exists()
