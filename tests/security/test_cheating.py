"""Cheating attempts: the server trusts only what its own replay of the log shows."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from games.models import DailyDeal, Game
from games.rules import Deal, replay
from tests.security.conftest import WON_DEAL, WON_LOG, assert_error_shape

pytestmark = pytest.mark.django_db


def submit(api: APIClient, body: dict[str, Any], **extra: Any) -> Any:
    return api.post("/api/games/", json.dumps(body), content_type="application/json", **extra)


def board(date: datetime.date, order: str = "score") -> dict[str, Any]:
    response = APIClient().get(f"/api/daily/{date.isoformat()}/leaderboard/?order={order}")
    assert response.status_code == 200, response.content
    return response.json()


def test_a_forged_score_moves_and_win_are_ignored(api: APIClient, daily: DailyDeal) -> None:
    log = WON_LOG[:40]
    truth = replay(WON_DEAL, log)
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
    response = submit(api, {"deal": WON_DEAL, "log": " ".join(WON_LOG)})
    assert response.status_code == 201, response.content
    assert response.json()["won"] is True
    assert board(daily.date, "moves")["total"] == 1


def test_a_replayed_idempotency_key_with_another_body_is_refused(
    api: APIClient, daily: DailyDeal
) -> None:
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
