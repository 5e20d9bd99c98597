"""Voiding a game: it leaves every board at once, and no practice game takes its place."""

from __future__ import annotations

from unittest import mock

import pytest
from django.test import Client

from games.models import Game, ModerationAction
from leaderboards.models import BoardEntry
from leaderboards.selectors import board_totals, leaderboard_page
from ranking.actions import game_void
from tests.fixtures import STOCK_CYCLE, WIN_LOG, client_for, close_day, submit, submit_ranked

pytestmark = pytest.mark.django_db


def _board(daily, order):
    return [
        (entry["player"], entry["game"])
        for entry in leaderboard_page(date=daily.date, order=order)["entries"]
    ]


def test_a_voided_ranked_game_leaves_the_boards_and_no_practice_game_takes_its_place(
    alice, bob, daily
):
    ranked = submit_ranked(client_for(alice), WIN_LOG).json()["id"]
    submit(client_for(alice), STOCK_CYCLE + WIN_LOG)  # practice, after the attempt
    bob_game = submit_ranked(client_for(bob), WIN_LOG[:50]).json()["id"]
    assert _board(daily, "moves") == [("alice", ranked)]

    game_void(game=Game.objects.get(pk=ranked), reason="cheating")

    assert _board(daily, "moves") == []
    assert _board(daily, "score") == [("bob", bob_game)]
    assert board_totals(date=daily.date).get("moves", 0) == 0
    assert board_totals(date=daily.date)["score"] == 1
    assert not BoardEntry.objects.filter(player=alice).exists()
    assert Game.objects.get(pk=ranked).void_reason == "cheating"


def test_voiding_a_practice_game_moves_nothing(alice, daily, django_capture_on_commit_callbacks):
    ranked = submit_ranked(client_for(alice), WIN_LOG).json()["id"]
    practice = submit(client_for(alice), WIN_LOG[:30]).json()["id"]

    with (
        mock.patch("leaderboards.changes.live.board_changed") as changed,
        django_capture_on_commit_callbacks(execute=True),
    ):
        game_void(game=Game.objects.get(pk=practice))

    assert _board(daily, "score") == [("alice", ranked)]
    changed.assert_not_called()


def test_voiding_announces_the_boards_that_moved_after_commit(
    alice, daily, django_capture_on_commit_callbacks
):
    game = submit_ranked(client_for(alice), WIN_LOG).json()["id"]

    with (
        mock.patch("leaderboards.changes.live.board_changed") as changed,
        django_capture_on_commit_callbacks(execute=True),
    ):
        game_void(game=Game.objects.get(pk=game))

    changed.assert_called_once_with(date=daily.date, orders=("score", "moves"), players=(alice.pk,))


def test_a_voided_game_stays_public_and_says_so(anon, alice, daily):
    game = submit(client_for(alice), WIN_LOG).json()["id"]
    game_void(game=Game.objects.get(pk=game))
    close_day(daily)

    body = anon.get(f"/api/games/{game}/").json()

    assert body["voided"] is True
    assert anon.get(f"/api/games/{game}/replay/").status_code == 200


def test_voiding_twice_changes_nothing(alice, daily):
    game = Game.objects.get(pk=submit(client_for(alice), WIN_LOG).json()["id"])
    first = game_void(game=game).voided_at

    assert game_void(game=game).voided_at == first


def test_the_admin_asks_why_then_voids_the_selected_games_and_logs_who_and_why(
    alice, daily, admin_user
):
    game = submit_ranked(client_for(alice), WIN_LOG).json()["id"]
    client = Client()
    client.force_login(admin_user)
    chosen = {"action": "void_games", "_selected_action": [game]}

    asked = client.post("/admin/games/game/", chosen)
    assert asked.status_code == 200 and 'name="reason"' in asked.content.decode()
    assert not Game.objects.get(pk=game).is_voided
    done = client.post("/admin/games/game/", {**chosen, "apply": "1", "reason": "a bot's log"})

    assert done.status_code == 302
    assert Game.objects.get(pk=game).is_voided
    assert _board(daily, "score") == []
    (logged,) = ModerationAction.objects.all()
    assert (logged.kind, logged.moderator, logged.player, logged.game_id) == (
        "void",
        admin_user,
        alice,
        game,
    )
    assert logged.reason == "a bot's log" and logged.created_at is not None
