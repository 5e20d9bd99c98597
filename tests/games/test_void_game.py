"""Voiding a game: it leaves every board at once, and the player's next best takes its place."""

from __future__ import annotations

from unittest import mock

import pytest
from django.contrib.admin.sites import site
from django.test import RequestFactory

from games.models import Game
from games.services import game_void
from leaderboards.models import BoardEntry, BoardTotal
from leaderboards.selectors import leaderboard_page
from tests.fixtures import STOCK_CYCLE, WIN_LOG, client_for, submit

pytestmark = pytest.mark.django_db


def _board(daily, order):
    return [
        (entry["player"], entry["game"])
        for entry in leaderboard_page(date=daily.date, order=order)["entries"]
    ]


def test_a_voided_best_game_is_replaced_by_the_next_best(alice, bob, daily):
    slow_win = submit(client_for(alice), STOCK_CYCLE + WIN_LOG).json()["id"]
    fast_win = submit(client_for(alice), WIN_LOG).json()["id"]
    bob_game = submit(client_for(bob), WIN_LOG[:50]).json()["id"]
    assert _board(daily, "moves") == [("alice", fast_win)]

    game_void(game=Game.objects.get(pk=fast_win), reason="cheating")

    assert _board(daily, "moves") == [("alice", slow_win)]
    assert _board(daily, "score") == [("alice", slow_win), ("bob", bob_game)]
    assert BoardTotal.objects.get(date=daily.date, board="moves").players == 1
    assert Game.objects.get(pk=fast_win).void_reason == "cheating"


def test_a_player_whose_only_game_is_voided_leaves_the_boards(alice, bob, daily):
    alice_game = submit(client_for(alice), WIN_LOG).json()["id"]
    submit(client_for(bob), WIN_LOG[:50])

    game_void(game=Game.objects.get(pk=alice_game))

    assert [player for player, _ in _board(daily, "score")] == ["bob"]
    assert _board(daily, "moves") == []
    assert BoardTotal.objects.get(date=daily.date, board="score").players == 1
    assert BoardTotal.objects.get(date=daily.date, board="moves").players == 0
    assert not BoardEntry.objects.filter(player=alice).exists()


def test_voiding_a_game_that_is_not_a_best_moves_nothing(
    alice, daily, django_capture_on_commit_callbacks
):
    best = submit(client_for(alice), WIN_LOG).json()["id"]
    worse = submit(client_for(alice), WIN_LOG[:30]).json()["id"]

    with (
        mock.patch("leaderboards.receivers.live.board_changed") as changed,
        django_capture_on_commit_callbacks(execute=True),
    ):
        game_void(game=Game.objects.get(pk=worse))

    assert _board(daily, "score") == [("alice", best)]
    changed.assert_not_called()


def test_voiding_announces_the_boards_that_moved_after_commit(
    alice, daily, django_capture_on_commit_callbacks
):
    game = submit(client_for(alice), WIN_LOG).json()["id"]

    with (
        mock.patch("leaderboards.receivers.live.board_changed") as changed,
        django_capture_on_commit_callbacks(execute=True),
    ):
        game_void(game=Game.objects.get(pk=game))

    changed.assert_called_once_with(date=daily.date, orders=("score", "moves"))


def test_a_voided_game_stays_public_and_says_so(anon, alice, daily):
    game = submit(client_for(alice), WIN_LOG).json()["id"]
    game_void(game=Game.objects.get(pk=game))

    body = anon.get(f"/api/games/{game}/").json()

    assert body["voided"] is True
    assert anon.get(f"/api/games/{game}/replay/").status_code == 200


def test_voiding_twice_changes_nothing(alice, daily):
    game = Game.objects.get(pk=submit(client_for(alice), WIN_LOG).json()["id"])
    first = game_void(game=game).voided_at

    assert game_void(game=game).voided_at == first


def test_the_admin_action_voids_the_selected_games(alice, daily, admin_user):
    game = submit(client_for(alice), WIN_LOG).json()["id"]
    request = RequestFactory().post("/admin/games/game/")
    request.user = admin_user
    model_admin = site._registry[Game]

    with mock.patch.object(model_admin, "message_user"):
        model_admin.void_games(request, Game.objects.filter(pk=game))

    assert Game.objects.get(pk=game).is_voided
    assert _board(daily, "score") == []
