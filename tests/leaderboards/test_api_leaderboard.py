"""GET /api/daily/{date}/leaderboard/: pages, tie-breaks, around-me and errors."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from tests.fixtures import STOCK_CYCLE, WIN, WIN_LOG, client_for, stored_game, submit

pytestmark = pytest.mark.django_db

T0 = timezone.now().replace(microsecond=0)


def at(seconds: int) -> datetime.datetime:
    return T0 + datetime.timedelta(seconds=seconds)


def board(client, daily, **params):
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return client.get(f"/api/daily/{daily.date.isoformat()}/leaderboard/?{query}")


def names(response) -> list[str]:
    return [entry["player"] for entry in response.json()["entries"]]


def test_the_score_board_breaks_ties_by_fewer_moves_then_earlier(anon, daily, make_player):
    p = {name: make_player(name) for name in ["late", "early", "fewer", "top", "low"]}
    stored_game(player=p["late"], daily=daily, score=300, moves=100, at=at(20))
    stored_game(player=p["early"], daily=daily, score=300, moves=100, at=at(10))
    stored_game(player=p["fewer"], daily=daily, score=300, moves=90, at=at(30))
    stored_game(player=p["top"], daily=daily, score=310, moves=500, at=at(40))
    stored_game(player=p["low"], daily=daily, score=5, moves=1, at=at(0))

    response = board(anon, daily, order="score")

    assert response.status_code == 200
    assert names(response) == ["top", "fewer", "early", "late", "low"]
    assert [e["rank"] for e in response.json()["entries"]] == [1, 2, 3, 4, 5]
    assert response.json()["total"] == 5


def test_the_moves_board_has_won_games_only_by_fewer_moves_then_score_then_earlier(
    anon, daily, make_player
):
    p = {name: make_player(name) for name in ["late", "early", "richer", "fast", "unfinished"]}
    stored_game(player=p["late"], daily=daily, score=1300, moves=400, won=True, at=at(20))
    stored_game(player=p["early"], daily=daily, score=1300, moves=400, won=True, at=at(10))
    stored_game(player=p["richer"], daily=daily, score=1350, moves=400, won=True, at=at(30))
    stored_game(player=p["fast"], daily=daily, score=1220, moves=300, won=True, at=at(40))
    stored_game(player=p["unfinished"], daily=daily, score=900, moves=50, at=at(0))

    response = board(anon, daily, order="moves")

    assert names(response) == ["fast", "richer", "early", "late"]
    assert response.json()["total"] == 4


def test_submitted_games_rank_by_what_the_server_computed(alice, bob, make_player, anon, daily):
    carol = make_player("carol")
    submit(client_for(alice), STOCK_CYCLE + WIN_LOG)  # a win in 60 more moves
    submit(client_for(bob), WIN_LOG)
    submit(client_for(carol), WIN_LOG[:100])

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


def test_a_player_has_one_entry_their_best_game(alice, anon, daily):
    client = client_for(alice)
    submit(client, WIN_LOG[:50])
    best = submit(client, WIN_LOG).json()
    submit(client, WIN_LOG[:80])

    response = board(anon, daily, order="score").json()

    assert [(e["player"], e["game"]) for e in response["entries"]] == [("alice", best["id"])]
    assert response["entries"][0]["submitted_at"] == best["created_at"]
    assert response["total"] == 1


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
