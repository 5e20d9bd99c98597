"""GET /api/daily/{date}/leaderboard/: pages, tie-breaks, around-me and errors."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from tests.fixtures import (
    STOCK_CYCLE,
    WIN,
    WIN_LOG,
    client_for,
    stored_game,
    submit,
    submit_ranked,
)

pytestmark = pytest.mark.django_db

T0 = timezone.now().replace(microsecond=0)


def at(seconds: int) -> datetime.datetime:
    return T0 + datetime.timedelta(seconds=seconds)


def board(client, daily, **params):
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return client.get(f"/api/daily/{daily.date.isoformat()}/leaderboard/?{query}")


def names(response) -> list[str]:
    return [entry["player"] for entry in response.json()["entries"]]


def test_the_score_board_breaks_ties_by_fewer_moves_then_duration_then_earlier(
    anon, daily, make_player
):
    names_ = ["late", "early", "quick", "untimed", "fewer", "top", "low"]
    p = {name: make_player(name) for name in names_}
    stored_game(player=p["late"], daily=daily, score=300, moves=100, at=at(20), duration_ms=9_000)
    stored_game(player=p["early"], daily=daily, score=300, moves=100, at=at(10), duration_ms=9_000)
    stored_game(player=p["quick"], daily=daily, score=300, moves=100, at=at(50), duration_ms=8_000)
    # Ranked before games were timed: after every timed game of the same result.
    stored_game(player=p["untimed"], daily=daily, score=300, moves=100, at=at(0))
    stored_game(player=p["fewer"], daily=daily, score=300, moves=90, at=at(30), duration_ms=10**8)
    stored_game(player=p["top"], daily=daily, score=310, moves=500, at=at(40), duration_ms=10**8)
    stored_game(player=p["low"], daily=daily, score=5, moves=1, at=at(0), duration_ms=1_000)

    response = board(anon, daily, order="score")

    assert response.status_code == 200
    assert names(response) == ["top", "fewer", "quick", "early", "late", "untimed", "low"]
    assert [e["rank"] for e in response.json()["entries"]] == [1, 2, 3, 4, 5, 6, 7]
    assert [e["duration_ms"] for e in response.json()["entries"]][2:6] == [
        8_000,
        9_000,
        9_000,
        None,
    ]
    assert response.json()["total"] == 7


def test_the_moves_board_has_won_games_only_by_fewer_moves_then_score_then_duration_then_earlier(
    anon, daily, make_player
):
    names_ = ["late", "early", "quick", "richer", "fast", "unfinished"]
    p = {name: make_player(name) for name in names_}
    won = {"daily": daily, "won": True}
    stored_game(player=p["late"], score=1300, moves=400, at=at(20), duration_ms=60_000, **won)
    stored_game(player=p["early"], score=1300, moves=400, at=at(10), duration_ms=60_000, **won)
    stored_game(player=p["quick"], score=1300, moves=400, at=at(60), duration_ms=50_000, **won)
    stored_game(player=p["richer"], score=1350, moves=400, at=at(30), duration_ms=90_000, **won)
    stored_game(player=p["fast"], score=1220, moves=300, at=at(40), duration_ms=99_000, **won)
    stored_game(player=p["unfinished"], daily=daily, score=900, moves=50, at=at(0))

    response = board(anon, daily, order="moves")

    assert names(response) == ["fast", "richer", "quick", "early", "late"]
    assert response.json()["total"] == 5


def test_submitted_games_rank_by_what_the_server_computed(alice, bob, make_player, anon, daily):
    carol = make_player("carol")
    submit_ranked(client_for(alice), STOCK_CYCLE + WIN_LOG)  # a win in 60 more moves
    submit_ranked(client_for(bob), WIN_LOG)
    submit_ranked(client_for(carol), WIN_LOG[:100])

    score = board(anon, daily, order="score").json()
    moves = board(anon, daily, order="moves").json()

    assert [(e["player"], e["moves"]) for e in score["entries"]][:2] == [
        ("bob", WIN["moves"]),
        ("alice", WIN["moves"] + 60),
    ]
    assert score["entries"][2]["player"] == "carol"
    assert [e["player"] for e in moves["entries"]] == ["bob", "alice"]
    assert score["deal"] == WIN["deal"]
    assert score["date"] == daily.date.isoformat()


def test_a_player_has_one_entry_their_ranked_game_not_a_better_practice_game(alice, anon, daily):
    client = client_for(alice)
    practice_before = submit(client, WIN_LOG).json()  # no attempt started: practice
    ranked = submit_ranked(client, WIN_LOG[:50]).json()
    practice_after = submit(client, WIN_LOG).json()  # the attempt is closed: practice

    response = board(anon, daily, order="score").json()

    assert [(e["player"], e["game"]) for e in response["entries"]] == [("alice", ranked["id"])]
    assert response["entries"][0]["submitted_at"] == ranked["created_at"]
    assert response["entries"][0]["duration_ms"] == ranked["duration_ms"]
    assert response["total"] == 1
    assert board(anon, daily, order="moves").json()["total"] == 0
    assert (practice_before["ranked"], ranked["ranked"], practice_after["ranked"]) == (
        False,
        True,
        False,
    )


def test_pages_carry_their_ranks(anon, daily, make_player):
    for i in range(7):
        stored_game(player=make_player(f"p{i}"), daily=daily, score=100 - i, moves=10)

    response = board(anon, daily, order="score", limit=3, offset=2).json()

    assert [(e["rank"], e["player"]) for e in response["entries"]] == [
        (3, "p2"),
        (4, "p3"),
        (5, "p4"),
    ]
    assert (response["total"], response["offset"], response["limit"]) == (7, 2, 3)


def test_around_me_centres_the_page_on_the_signed_in_player(daily, make_player):
    players = [make_player(f"p{i}") for i in range(9)]
    for i, player in enumerate(players):
        stored_game(player=player, daily=daily, score=100 - i, moves=10)

    response = board(client_for(players[4]), daily, order="score", limit=3, around="me")

    assert response.status_code == 200
    body = response.json()
    assert [(e["rank"], e["player"]) for e in body["entries"]] == [
        (4, "p3"),
        (5, "p4"),
        (6, "p5"),
    ]
    assert body["me"]["rank"] == 5
    assert body["offset"] == 3


@pytest.mark.parametrize(("me", "expected"), [(0, [0, 1, 2, 3]), (8, [5, 6, 7, 8])])
def test_around_me_stays_full_at_either_end_of_the_board(daily, make_player, me, expected):
    players = [make_player(f"p{i}") for i in range(9)]
    for i, player in enumerate(players):
        stored_game(player=player, daily=daily, score=100 - i, moves=10)

    body = board(client_for(players[me]), daily, order="score", limit=4, around="me").json()

    assert [e["player"] for e in body["entries"]] == [f"p{i}" for i in expected]
    assert [e["rank"] for e in body["entries"]] == [i + 1 for i in expected]
    assert body["me"]["rank"] == me + 1


def test_around_me_needs_a_signed_in_player(anon, daily):
    response = board(anon, daily, around="me")

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


def test_around_me_without_an_entry_is_404(alice, daily):
    stored_game(player=alice, daily=daily, score=10, moves=3)  # unfinished: not on the moves board

    response = board(client_for(alice), daily, order="moves", around="me")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_on_board"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"order": "time"}, "order"),
        ({"limit": 101}, "limit"),
        ({"limit": 0}, "limit"),
        ({"offset": -1}, "offset"),
        ({"around": "you"}, "around"),
    ],
)
def test_bad_parameters_are_validation_errors(anon, daily, params, field):
    response = board(anon, daily, **params)

    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]


def test_a_future_day_has_no_board(anon, today):
    tomorrow = (today + datetime.timedelta(days=1)).isoformat()

    response = anon.get(f"/api/daily/{tomorrow}/leaderboard/")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "day_not_open"


def test_a_past_day_keeps_its_board(anon, daily, alice):
    from games.models import DailyDeal

    yesterday = DailyDeal.objects.create(
        date=daily.date - datetime.timedelta(days=1), number=daily.number
    )
    stored_game(player=alice, daily=yesterday, score=42, moves=7)

    past = anon.get(f"/api/daily/{yesterday.date.isoformat()}/leaderboard/").json()
    current = board(anon, daily).json()

    assert [(e["player"], e["score"]) for e in past["entries"]] == [("alice", 42)]
    assert current["entries"] == []
    assert current["total"] == 0
