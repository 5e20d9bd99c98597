"""Cheating attempts: the server trusts only what its own replay of the log shows."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
from django.db.models import F
from rest_framework.test import APIClient

from games.models import Attempt, DailyDeal, Game
from games.rules import Deal, replay
from tests.security.conftest import WON_DEAL, WON_LOG, assert_error_shape

pytestmark = pytest.mark.django_db

HOUR = datetime.timedelta(hours=1)


def submit(api: APIClient, body: dict[str, Any], **extra: Any) -> Any:
    return api.post("/api/games/", json.dumps(body), content_type="application/json", **extra)


def start(api: APIClient, date: datetime.date, *, back: datetime.timedelta = HOUR) -> Any:
    """Start the day's ranked attempt (the server's clock starts), `back` in the past:
    the games below are played at a person's pace, so review holds none of them."""
    response = api.post(f"/api/daily/{date.isoformat()}/attempt/")
    Attempt.objects.filter(pk=response.json()["id"]).update(started_at=F("started_at") - back)
    return response


def board(date: datetime.date, order: str = "score") -> dict[str, Any]:
    response = APIClient().get(f"/api/daily/{date.isoformat()}/leaderboard/?order={order}")
    assert response.status_code == 200, response.content
    return response.json()


def test_a_forged_score_moves_and_win_are_ignored(api: APIClient, daily: DailyDeal) -> None:
    log = WON_LOG[:40]
    truth = replay(WON_DEAL, log)
    start(api, daily.date)
    response = submit(
        api,
        {
            "deal": WON_DEAL,
            "log": log,
            "score": 1515,
            "moves": 1,
            "won": True,
            "actions": 1,
            "player": "somebody-else",
            "rules_version": "EH0",
            "daily": "2020-01-01",
            "duration_ms": 1,
            "assisted": False,
            "ranked": True,
        },
    )
    assert response.status_code == 201, response.content
    game = Game.objects.get()
    assert (game.score, game.moves, game.won, game.actions) == (
        truth.score,
        truth.moves,
        False,
        40,
    )
    assert game.player.username == "alice"
    assert game.rules_version == "EH1"
    # The duration is the server's own measure, never the client's.
    assert game.duration_ms is not None and game.duration_ms >= 0
    assert game.duration_ms == response.json()["duration_ms"]
    entry = board(daily.date)["entries"][0]
    assert (entry["score"], entry["moves"], entry["won"]) == (truth.score, truth.moves, False)


def test_a_log_for_another_deal_is_refused_and_stores_nothing(
    api: APIClient, daily: DailyDeal
) -> None:
    other = Deal(Deal.from_code(WON_DEAL).number % 999_999 + 1).code
    response = submit(api, {"deal": other, "log": WON_LOG})
    assert response.status_code == 400
    error = assert_error_shape(response.json())
    assert error["code"] == "illegal_action"
    assert 1 <= error["index"] <= len(WON_LOG)
    assert error["token"] == WON_LOG[error["index"] - 1]
    assert Game.objects.count() == 0
    assert board(daily.date)["total"] == 0


def test_a_log_that_plays_on_after_the_win_is_refused(api: APIClient, daily: DailyDeal) -> None:
    response = submit(api, {"deal": WON_DEAL, "log": [*WON_LOG, "S"]})
    assert response.status_code == 400
    error = assert_error_shape(response.json())
    assert error["code"] == "illegal_action"
    assert error["reason_code"] == "game_over"
    assert error["index"] == len(WON_LOG) + 1
    assert Game.objects.count() == 0


def test_an_undo_after_the_win_is_refused_too(api: APIClient, daily: DailyDeal) -> None:
    response = submit(api, {"deal": WON_DEAL, "log": [*WON_LOG, "U"]})
    assert response.status_code == 400
    assert assert_error_shape(response.json())["reason_code"] == "game_over"


def test_the_won_log_itself_is_accepted_and_ranked(api: APIClient, daily: DailyDeal) -> None:
    start(api, daily.date)
    response = submit(api, {"deal": WON_DEAL, "log": " ".join(WON_LOG)})
    assert response.status_code == 201, response.content
    assert response.json()["won"] is True
    assert board(daily.date, "moves")["total"] == 1


def test_a_replayed_idempotency_key_with_another_body_is_refused(
    api: APIClient, daily: DailyDeal
) -> None:
    start(api, daily.date)
    first = submit(api, {"deal": WON_DEAL, "log": WON_LOG[:10]}, HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == 201
    again = submit(api, {"deal": WON_DEAL, "log": WON_LOG[:10]}, HTTP_IDEMPOTENCY_KEY="k-1")
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    other = submit(api, {"deal": WON_DEAL, "log": WON_LOG}, HTTP_IDEMPOTENCY_KEY="k-1")
    assert other.status_code == 409
    assert assert_error_shape(other.json())["code"] == "idempotency_key_reused"
    assert Game.objects.count() == 1
    # The better game sent under the reused key did not reach the board.
    assert board(daily.date, "moves")["total"] == 0


def test_another_player_may_use_the_same_idempotency_key(
    api: APIClient, daily: DailyDeal, make_player: Any
) -> None:
    from rest_framework.authtoken.models import Token

    bob = APIClient()
    bob.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=make_player('bob')).key}")
    assert (
        submit(api, {"deal": WON_DEAL, "log": "S"}, HTTP_IDEMPOTENCY_KEY="same").status_code == 201
    )
    assert (
        submit(bob, {"deal": WON_DEAL, "log": "S S"}, HTTP_IDEMPOTENCY_KEY="same").status_code
        == 201
    )
    assert Game.objects.count() == 2


def test_a_game_of_a_closed_day_is_stored_but_not_ranked(
    api: APIClient, daily: DailyDeal, today: datetime.date
) -> None:
    yesterday = today - datetime.timedelta(days=1)
    closed = DailyDeal.objects.create(date=yesterday, number=Deal.from_code(WON_DEAL).number + 1)
    closed_code = Deal(closed.number).code
    response = submit(api, {"deal": closed_code, "log": "S"})
    assert response.status_code == 201, response.content
    assert response.json()["daily"] is None
    assert board(yesterday)["total"] == 0
    assert board(today)["total"] == 0


def test_a_game_of_a_future_day_is_not_ranked_and_the_day_is_not_served(
    api: APIClient, daily: DailyDeal, today: datetime.date
) -> None:
    tomorrow = today + datetime.timedelta(days=1)
    assert APIClient().get(f"/api/daily/{tomorrow.isoformat()}/").status_code == 404
    assert APIClient().get(f"/api/daily/{tomorrow.isoformat()}/leaderboard/").status_code == 404
    assert not DailyDeal.objects.filter(date=tomorrow).exists()


def test_anonymous_and_bad_token_submissions_are_refused(daily: DailyDeal) -> None:
    anonymous = submit(APIClient(), {"deal": WON_DEAL, "log": "S"})
    assert anonymous.status_code in {401, 403}
    assert_error_shape(anonymous.json())
    forged = APIClient()
    forged.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    assert submit(forged, {"deal": WON_DEAL, "log": "S"}).status_code == 401
    assert Game.objects.count() == 0


def test_a_second_game_of_the_day_is_practice_however_good(
    api: APIClient, daily: DailyDeal
) -> None:
    start(api, daily.date)
    first = submit(api, {"deal": WON_DEAL, "log": WON_LOG[:5]})
    better = submit(api, {"deal": WON_DEAL, "log": WON_LOG})
    assert (first.json()["ranked"], better.json()["ranked"]) == (True, False)
    # Starting again (a cleared browser, another device) gives the same, closed attempt.
    again = start(api, daily.date)
    assert again.status_code == 200
    assert (again.json()["status"], again.json()["game"]) == ("closed", first.json()["id"])
    third = submit(api, {"deal": WON_DEAL, "log": WON_LOG})
    assert third.json()["ranked"] is False
    assert board(daily.date, "moves")["total"] == 0
    assert [e["game"] for e in board(daily.date)["entries"]] == [first.json()["id"]]


def test_per_action_times_cannot_claim_more_time_than_the_server_saw(
    api: APIClient, daily: DailyDeal
) -> None:
    start(api, daily.date, back=datetime.timedelta(0))
    log = WON_LOG[:20]
    # The attempt began a moment ago: times spread over an hour are refused.
    times = [i * 180_000 for i in range(1, len(log) + 1)]
    response = submit(api, {"deal": WON_DEAL, "log": log, "times": times})
    assert response.status_code == 400
    error = assert_error_shape(response.json())
    assert (error["code"], error["reason_code"], error["index"]) == (
        "invalid_times",
        "after_submission",
        len(log),
    )
    assert Game.objects.count() == 0
