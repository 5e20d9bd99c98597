"""Closing a day: final ranks stored, results frozen, the same result when run twice;
the day's results live before; the archive and its pages; the share card."""

from __future__ import annotations

import datetime
import random

import pytest
from django.core.management import call_command
from django.utils import timezone

from games.models import DailyDeal
from leaderboards.models import BoardEntry, DayResult
from leaderboards.selectors import day_results, leaderboard_page, player_board_results
from leaderboards.services import day_close, days_to_close
from ranking.actions import game_void
from tests.fixtures import WIN_LOG, client_for, play_assisted, play_ranked, stored_game

# Days and hours matter here: `.ci/run` runs these again at the turn of a day.
pytestmark = [pytest.mark.django_db, pytest.mark.clock]


@pytest.fixture
def yesterday(db, today):
    return DailyDeal.objects.create(date=today - datetime.timedelta(days=1), number=7, par=120)


@pytest.fixture
def crowd(yesterday, make_player):
    """30 players of yesterday with random scores and moves (ties broken by duration)."""
    rng = random.Random(3)
    players = []
    for i in range(30):
        player = make_player(f"p{i:02}")
        won = rng.random() < 0.5
        stored_game(
            player=player,
            daily=yesterday,
            score=rng.choice([40, 60, 104]) if won else rng.choice([20, 40]),
            moves=rng.choice([120, 130, 150]),
            won=won,
            duration_ms=rng.choice([None, 1_000, 2_000]),
        )
        players.append(player)
    return players


def _ranks(date):
    return sorted(
        BoardEntry.objects.filter(date=date).values_list("board", "player__username", "final__rank")
    )


@pytest.mark.parametrize("batch", [1, 7, 50_000])
def test_closing_stores_each_entrys_rank_on_the_board(crowd, yesterday, batch):
    expected = {
        order: {entry["player"]: entry["rank"] for entry in leaderboard_page(
            date=yesterday.date, order=order, limit=100)["entries"]}
        for order in ("score", "moves")
    }  # fmt: skip
    day_close(date=yesterday.date, batch=batch)
    for board, player, final_rank in _ranks(yesterday.date):
        assert final_rank == expected[board][player]


@pytest.mark.parametrize("batch", [4, 50_000])
def test_closing_twice_gives_the_same_ranks_in_any_batches(crowd, yesterday, batch):
    day_close(date=yesterday.date, batch=batch)
    first = _ranks(yesterday.date)
    assert all(rank is not None for *_, rank in first)
    day_close(date=yesterday.date, batch=batch)
    assert _ranks(yesterday.date) == first


def test_closing_twice_gives_the_same_result(crowd, yesterday):
    call_command("close_days")
    first_ranks = _ranks(yesterday.date)
    first = day_results(date=yesterday.date)
    call_command("close_days")
    call_command("close_days", "--date", yesterday.date.isoformat())
    assert _ranks(yesterday.date) == first_ranks
    assert day_results(date=yesterday.date) == first
    assert DayResult.objects.count() == 1


def test_results_are_live_while_the_day_runs_and_frozen_once_closed(yesterday, make_player):
    players = [make_player(f"q{i}") for i in range(4)]
    stored_game(player=players[0], daily=yesterday, score=104, moves=130, won=True)
    stored_game(player=players[1], daily=yesterday, score=104, moves=120, won=True)
    late = stored_game(player=players[2], daily=yesterday, score=30, moves=90)
    live = day_results(date=yesterday.date)
    assert live["final"] is False
    assert (live["players"], live["won"]) == (3, 2)
    assert live["score_distribution"] == [
        {"score": 30, "players": 1},
        {"score": 104, "players": 2},
    ]
    assert live["moves_distribution"] == [
        {"moves": 120, "players": 1},
        {"moves": 130, "players": 1},
    ]
    day_close(date=yesterday.date)
    frozen = day_results(date=yesterday.date)
    assert frozen["final"] is True
    assert {k: v for k, v in frozen.items() if k != "final"} == {
        k: v for k, v in live.items() if k != "final"
    }
    # A change to the boards after the close moves no frozen result.
    game_void(game=late, reason="late")
    assert day_results(date=yesterday.date) == frozen


def test_a_players_history_shows_the_final_rank(yesterday, make_player):
    first, second = make_player("first"), make_player("second")
    stored_game(player=first, daily=yesterday, score=104, moves=130, won=True)
    stored_game(player=second, daily=yesterday, score=100, moves=130, won=True)
    day_close(date=yesterday.date)
    # The rank a player had when the day closed stays, whatever the board does later.
    BoardEntry.objects.filter(player=first).delete()
    (day,) = player_board_results(player=second)
    assert day["score"]["rank"] == 2


def test_only_days_over_are_closed(yesterday, daily):
    now = timezone.now()
    midnight = datetime.datetime.combine(daily.date, datetime.time.min, tzinfo=datetime.UTC)
    assert days_to_close(now=midnight + datetime.timedelta(minutes=1)) == []
    assert days_to_close(now=midnight + datetime.timedelta(minutes=3)) == [yesterday.date]
    assert daily.date not in days_to_close(now=now)


def test_the_results_api_for_a_day(yesterday, crowd, anon):
    answer = anon.get(f"/api/daily/{yesterday.date.isoformat()}/results/")
    assert answer.status_code == 200
    body = answer.json()
    assert body["players"] == 30 and body["final"] is False
    assert sum(row["players"] for row in body["score_distribution"]) == 30
    assert sum(row["players"] for row in body["moves_distribution"]) == body["won"]
    assert anon.get("/api/daily/2999-01-01/results/").status_code == 404


def test_the_archive_is_newest_first_and_paginated(db, today, make_player, anon):
    for n in range(1, 6):
        DailyDeal.objects.create(date=today - datetime.timedelta(days=n), number=n, par=100 + n)
    DailyDeal.objects.create(date=today, number=9)
    DailyDeal.objects.create(date=today + datetime.timedelta(days=1), number=10)
    first = anon.get("/api/days/?limit=2").json()
    second = anon.get("/api/days/?limit=2&offset=2").json()
    last = anon.get("/api/days/?limit=2&offset=4").json()
    assert first["total"] == 5
    dates = [d["date"] for page in (first, second, last) for d in page["days"]]
    expected = [(today - datetime.timedelta(days=n)).isoformat() for n in range(1, 6)]
    assert dates == expected
    assert first["days"][0]["par"] == 101
    assert first["days"][0]["players"] == 0 and first["days"][0]["winner"] is None
    assert anon.get("/api/days/?limit=0").status_code == 400


def test_the_archive_shows_the_winner_and_a_signed_in_players_own_result(yesterday, make_player):
    alice, bob = make_player("alice"), make_player("bob")
    stored_game(player=alice, daily=yesterday, score=60, moves=130)
    stored_game(player=bob, daily=yesterday, score=104, moves=125, won=True)
    (day,) = client_for(alice).get("/api/days/").json()["days"]
    assert day["players"] == 2
    assert day["winner"] == {"player": "bob", "score": 104, "moves": 125, "won": True}
    assert day["me"] == {"score": 60, "moves": 130, "won": False, "rank": 2}
    (anonymous,) = client_for(None).get("/api/days/").json()["days"]
    assert anonymous["me"] is None


def test_the_share_text_has_no_part_of_the_log(daily, alice, bob, anon):
    game = play_ranked(alice, WIN_LOG)
    play_ranked(bob, "S")
    answer = anon.get(f"/api/games/{game.pk}/share/")
    assert answer.status_code == 200
    body = answer.json()
    text = body["text"]
    assert daily.date.isoformat() in text
    assert f"Won in {game.moves} moves" in text
    assert "rank 1 of 2" in text and "Streak: 1 day" in text
    assert body["url"].endswith(f"/games/{game.pk}/")
    assert text.endswith(body["url"])
    # No action of the log, and no card: the words only.
    words = set(text.replace("\n", " ").split())
    assert not words & set(WIN_LOG)
    for card in ("AS", "KH", "10D", "TD", "♠", "♥", "♦", "♣"):
        assert card not in text
    assert game.log not in text


def test_the_share_text_speaks_the_readers_language(daily, alice, anon):
    game = play_ranked(alice, "S")
    text = anon.get(f"/api/games/{game.pk}/share/", HTTP_ACCEPT_LANGUAGE="es").json()["text"]
    assert "Puntuación" in text or "puesto" in text


@pytest.mark.parametrize(
    ("language", "assisted"),
    [("en", "Assisted: a hint was used"), ("es", "Con ayuda"), ("nl", "Met hulp")],
)
def test_an_assisted_game_says_so_in_its_share_text_and_has_no_rank(
    daily, alice, bob, anon, language, assisted
):
    bobs = play_ranked(bob, "S")
    game = play_assisted(alice, WIN_LOG)

    text = anon.get(f"/api/games/{game.pk}/share/", HTTP_ACCEPT_LANGUAGE=language).json()["text"]

    assert assisted in text
    for rank in ("rank", "puesto", "plaats"):
        assert rank not in text.lower()
    # Bob's game is alone on the board: the assisted one takes no place there.
    ranked = anon.get(f"/api/games/{bobs.pk}/share/").json()["text"]
    assert "rank 1 of 1" in ranked and "Assisted" not in ranked


def test_a_missing_game_has_no_share_card(db, anon):
    assert anon.get("/api/games/999999/share/").status_code == 404
