"""POST /api/games/: the server replays the log and stores what it computed."""

from __future__ import annotations

import datetime
from unittest import mock

import pytest
from django.test import override_settings

from games import rules
from games.models import Game
from games.rules.errors import place_in_words
from leaderboards.models import BoardEntry
from tests.fixtures import (
    DEAL,
    HUMAN_MS_PER_ACTION,
    VECTOR_GAMES,
    WIN,
    WIN_LOG,
    client_for,
    submit,
    submit_ranked,
)

pytestmark = pytest.mark.django_db

UNFINISHED = next(v for v in VECTOR_GAMES if "score" in v and not v["won"] and v["deal"] != DEAL)
REFUSED = next(v for v in VECTOR_GAMES if "refused_at" in v and v["refused_at"] > 1)


def test_it_stores_a_won_game_with_the_results_it_computed(alice, daily):
    response = submit(client_for(alice), WIN["log"])

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["player"] == "alice"
    assert body["deal"] == DEAL
    assert (body["score"], body["moves"], body["won"]) == (WIN["score"], WIN["moves"], True)
    assert body["actions"] == len(WIN_LOG)
    assert body["daily"] == daily.date.isoformat()
    assert body["rules_version"] == "EH1"
    assert body["url"].endswith(f"/{body['id']}/")
    game = Game.objects.get(pk=body["id"])
    assert game.log.split() == [token.upper() for token in WIN_LOG]
    assert (game.score, game.moves, game.won, game.daily_id) == (
        WIN["score"],
        WIN["moves"],
        True,
        daily.pk,
    )


def test_it_accepts_the_log_as_a_list_of_tokens(alice, daily):
    response = submit(client_for(alice), WIN_LOG)

    assert response.status_code == 201
    assert response.json()["score"] == WIN["score"]


def test_it_never_takes_a_score_or_player_from_the_client(alice, bob, daily):
    response = client_for(alice).post(
        "/api/games/",
        {"deal": DEAL, "log": WIN_LOG[:10], "score": 1515, "won": True, "player": "bob"},
        format="json",
    )

    assert response.status_code == 201
    game = Game.objects.get(pk=response.json()["id"])
    assert game.player == alice
    assert game.score < 1515 and not game.won


def test_a_game_of_another_deal_is_stored_but_counts_for_no_day(alice, daily):
    response = submit(client_for(alice), UNFINISHED["log"], deal=UNFINISHED["deal"])

    assert response.status_code == 201
    body = response.json()
    assert (body["score"], body["moves"], body["won"]) == (
        UNFINISHED["score"],
        UNFINISHED["moves"],
        False,
    )
    assert body["daily"] is None
    assert not BoardEntry.objects.exists()


def test_an_illegal_log_is_refused_with_the_engines_index_token_and_reason(alice, daily):
    response = submit(client_for(alice), REFUSED["log"], deal=REFUSED["deal"])

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "illegal_action"
    assert error["index"] == REFUSED["refused_at"]
    assert error["token"].upper() == REFUSED["log"].split()[REFUSED["refused_at"] - 1].upper()
    assert error["reason"] and error["reason_code"]
    assert str(REFUSED["refused_at"]) in error["message"]
    assert not Game.objects.exists()


def test_an_unreadable_action_is_refused_with_its_position(alice, daily):
    response = submit(client_for(alice), ["S", "S", "X9"])

    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["index"], error["reason_code"]) == (
        "illegal_action",
        3,
        "unreadable_action",
    )
    assert not Game.objects.exists()


def test_a_letter_that_only_upper_cases_to_an_action_is_refused_not_read_as_it(alice, daily):
    # "ſ".upper() == "S" in Python; the log must be read as the engine reads it.
    response = submit(client_for(alice), "S \u017f")

    error = response.json()["error"]
    assert (error["code"], error["index"], error["reason_code"]) == (
        "illegal_action",
        2,
        "unreadable_action",
    )
    assert not Game.objects.exists()


def test_a_refusal_carries_the_fields_of_its_reason_so_clients_can_translate_it(alice, daily):
    # The waste is empty before the first tap, and the reason names it.
    response = submit(client_for(alice), ["W1"])

    error = response.json()["error"]
    template = rules.REASONS[error["reason_code"]]
    # Machine-readable: the place as the log writes it, not English words.
    assert error["params"] == {"source": "W"}
    in_words = {"source": place_in_words(error["params"]["source"])}
    assert (
        template.format(**in_words)
        == error["reason"]
        == ("there is no card to move: the waste is empty")
    )


@pytest.mark.parametrize(
    "deal", ["EH1-N-AAAAAAA", "EH2-N-AAAAAAB", "EH1-N-AAAAB", "EH1-N-AAAAA1B", "", "x" * 65]
)
def test_a_bad_deal_code_is_refused(alice, daily, deal):
    response = submit(client_for(alice), "S", deal=deal)

    assert response.status_code == 400
    assert response.json()["error"]["code"] in {"invalid_deal", "invalid"}
    assert response.json()["error"]["message"]
    assert not Game.objects.exists()


@override_settings(GAME_MAX_ACTIONS=20_000)
def test_a_log_over_20000_actions_is_refused_before_replay(alice, daily):
    with mock.patch("games.parsing.rules.replay") as replay:
        response = submit(client_for(alice), "S " * 20_001)

    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["max_actions"], error["actions"]) == (
        "log_too_long",
        20_000,
        20_001,
    )
    replay.assert_not_called()
    assert not Game.objects.exists()


def test_an_empty_log_is_refused(alice, daily):
    response = submit(client_for(alice), "   ")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "empty_log"


@pytest.mark.parametrize("log", [12, None, ["S", 3], {"S": 1}])
def test_a_log_of_the_wrong_type_is_a_validation_error(alice, daily, log):
    response = submit(client_for(alice), log)

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert "log" in error["fields"]


def test_an_unreadable_body_is_a_parse_error(alice, daily):
    response = client_for(alice).post("/api/games/", "{not json", content_type="application/json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"


def test_anonymous_players_cannot_submit(anon, daily):
    response = submit(anon, WIN_LOG)

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    assert not Game.objects.exists()


def test_a_wrong_token_is_refused(anon, daily):
    anon.credentials(HTTP_AUTHORIZATION="Token not-a-token")

    response = submit(anon, WIN_LOG)

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


def test_a_session_player_can_submit(alice, daily):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_login(alice)

    response = submit(client, WIN_LOG)

    assert response.status_code == 201
    assert response.json()["player"] == "alice"


def test_get_is_not_allowed_on_the_collection(alice):
    response = client_for(alice).get("/api/games/")

    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_before_the_first_day_games_are_stored_for_no_day(alice, settings):
    settings.DAILY_DEAL_FIRST_DATE = datetime.date(2999, 1, 1)

    response = submit(client_for(alice), WIN_LOG)

    assert response.status_code == 201
    assert response.json()["daily"] is None
    assert not BoardEntry.objects.exists()


def test_a_stored_ranked_game_reads_back_whole(alice, daily) -> None:
    # The submission inserts its game with a plain statement (games.services),
    # which sends no model signal: nothing may listen for a game's.
    from django.db.models.signals import post_save, pre_save

    assert not pre_save.has_listeners(Game) and not post_save.has_listeners(Game)
    times = [HUMAN_MS_PER_ACTION * (index + 1) for index in range(len(WIN_LOG))]
    body = submit_ranked(client_for(alice), WIN_LOG, times=times).json()
    game = Game.objects.get(pk=body["id"])
    assert (game.daily, game.ranked, game.log, game.won) == (daily, True, " ".join(WIN_LOG), True)
    assert game.times == times and game.review["actions"] == len(WIN_LOG)
    assert game.attempt_id is not None and game.created_at.tzinfo is not None
