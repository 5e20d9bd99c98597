"""Banning a player and lifting the ban; every moderation action logged with who, when, why."""

from __future__ import annotations

import datetime
from unittest import mock

import pytest
from django.test import Client

from easyharp_site.errors import ServiceError
from games.models import Attempt, DailyDeal, Game, ModerationAction
from leaderboards.models import BoardEntry
from leaderboards.selectors import board_totals, leaderboard_page
from ranking.actions import player_ban, player_unban
from tests.fixtures import (
    PASSWORD,
    WIN_LOG,
    client_for,
    start,
    stored_game,
    submit,
    submit_ranked,
)

pytestmark = pytest.mark.django_db


def players_on(daily: DailyDeal, order: str = "score") -> list[str]:
    return [entry["player"] for entry in leaderboard_page(date=daily.date, order=order)["entries"]]


@pytest.fixture
def two_days(daily, alice, bob):
    """alice and bob ranked today and yesterday; alice also played some practice."""
    yesterday = DailyDeal.objects.create(date=daily.date - datetime.timedelta(days=1), number=9)
    submit_ranked(client_for(alice), WIN_LOG)
    submit(client_for(alice), WIN_LOG[:10])  # practice
    submit_ranked(client_for(bob), WIN_LOG[:40])
    stored_game(player=alice, daily=yesterday, score=500, moves=90, won=True, duration_ms=9_000)
    stored_game(player=bob, daily=yesterday, score=100, moves=50, duration_ms=8_000)
    return daily, yesterday


def test_a_ban_takes_every_game_of_the_player_off_every_board_at_once(two_days, alice, admin_user):
    today, yesterday = two_days
    assert players_on(today) == players_on(yesterday) == ["alice", "bob"]

    assert player_ban(player=alice, moderator=admin_user, reason="a bot") is True

    for day in two_days:
        assert players_on(day) == ["bob"]
        assert players_on(day, "moves") == []
        assert board_totals(date=day.date)["score"] == 1
    assert not BoardEntry.objects.filter(player=alice).exists()
    # Stored, still replayable: a ban removes nothing.
    assert Game.objects.filter(player=alice).count() == 3


def test_lifting_the_ban_brings_the_ranked_games_back(two_days, alice, admin_user):
    today, yesterday = two_days
    player_ban(player=alice, moderator=admin_user, reason="a bot")

    assert player_unban(player=alice, moderator=admin_user, reason="a mistake") is True

    for day in two_days:
        assert players_on(day) == ["alice", "bob"]
    assert players_on(today, "moves") == players_on(yesterday, "moves") == ["alice"]
    # Only the ranked games come back, never the practice.
    assert set(BoardEntry.objects.filter(player=alice).values_list("game__ranked", flat=True)) == {
        True
    }


def test_the_live_boards_hear_of_a_ban_after_it_commits(
    two_days, alice, admin_user, django_capture_on_commit_callbacks
):
    today, yesterday = two_days
    with mock.patch("leaderboards.changes.live.board_changed") as changed:
        with django_capture_on_commit_callbacks() as callbacks:
            player_ban(player=alice, moderator=admin_user, reason="a bot")
        changed.assert_not_called()  # not before the commit
        for callback in callbacks:
            callback()

    assert sorted(call.kwargs["date"] for call in changed.call_args_list) == [
        yesterday.date,
        today.date,
    ]
    assert {call.kwargs["orders"] for call in changed.call_args_list} == {("score", "moves")}


def test_a_banned_player_can_no_longer_sign_in_or_submit(alice, daily, admin_user):
    session = Client()
    session.force_login(alice)
    token_client = client_for(alice)

    player_ban(player=alice, moderator=admin_user, reason="abuse")

    by_token = submit(token_client, WIN_LOG)
    assert by_token.status_code == 401
    assert start(token_client).status_code == 401
    by_session = session.post(
        "/api/games/", {"deal": "EH1-N-AAAAAAE", "log": "S"}, content_type="application/json"
    )
    assert by_session.status_code in (401, 403)
    login = Client().post(
        "/api/auth/token/",
        {"username": "alice", "password": PASSWORD},
        content_type="application/json",
    )
    assert login.status_code == 401
    assert login.json()["error"]["code"] == "invalid_credentials"
    assert not Game.objects.exists() and not Attempt.objects.exists()


def test_after_the_ban_is_lifted_the_player_signs_in_and_plays_again(alice, daily, admin_user):
    player_ban(player=alice, moderator=admin_user, reason="abuse")
    player_unban(player=alice, moderator=admin_user, reason="appeal upheld")

    login = Client().post(
        "/api/auth/token/",
        {"username": "alice", "password": PASSWORD},
        content_type="application/json",
    )
    assert login.status_code == 200
    assert submit_ranked(client_for(alice), WIN_LOG).json()["ranked"] is True


def test_each_ban_and_its_lifting_is_logged_with_who_when_and_why(alice, daily, admin_user):
    player_ban(player=alice, moderator=admin_user, reason="a bot")
    player_unban(player=alice, moderator=admin_user, reason="a mistake")

    logged = list(ModerationAction.objects.order_by("id").values_list("kind", "reason"))
    assert logged == [("ban", "a bot"), ("unban", "a mistake")]
    for action in ModerationAction.objects.all():
        assert (action.moderator, action.player, action.game) == (admin_user, alice, None)
        assert action.created_at is not None


def test_a_ban_needs_a_reason_and_a_second_ban_changes_nothing(alice, daily, admin_user):
    with pytest.raises(ServiceError) as refused:
        player_ban(player=alice, moderator=admin_user, reason="  ")
    assert refused.value.code == "reason_required"
    alice.refresh_from_db()
    assert alice.is_active

    player_ban(player=alice, moderator=admin_user, reason="a bot")
    assert player_ban(player=alice, moderator=admin_user, reason="again") is False
    assert player_unban(player=alice, moderator=admin_user, reason="lifted") is True
    assert player_unban(player=alice, moderator=admin_user, reason="lifted") is False
    assert ModerationAction.objects.count() == 2


# --- In the admin ---------------------------------------------------------------------


@pytest.fixture
def admin_client(admin_user) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


def test_the_admin_asks_why_before_banning(two_days, alice, admin_client, admin_user):
    chosen = {"action": "ban_players", "_selected_action": [alice.pk]}

    asked = admin_client.post("/admin/auth/user/", chosen)
    without_reason = admin_client.post("/admin/auth/user/", {**chosen, "apply": "1"})
    alice.refresh_from_db()
    assert alice.is_active
    done = admin_client.post("/admin/auth/user/", {**chosen, "apply": "1", "reason": "a bot"})

    assert asked.status_code == without_reason.status_code == 200
    assert 'name="reason"' in asked.content.decode()
    assert "Say why" in without_reason.content.decode()
    assert done.status_code == 302
    alice.refresh_from_db()
    assert not alice.is_active
    assert players_on(two_days[0]) == ["bob"]
    action = ModerationAction.objects.get()
    assert (action.kind, action.moderator, action.reason) == ("ban", admin_user, "a bot")


def test_the_admin_lifts_a_ban_with_a_reason(two_days, alice, admin_client, admin_user):
    player_ban(player=alice, moderator=admin_user, reason="a bot")

    done = admin_client.post(
        "/admin/auth/user/",
        {"action": "unban_players", "_selected_action": [alice.pk], "apply": "1", "reason": "ok"},
    )

    assert done.status_code == 302
    alice.refresh_from_db()
    assert alice.is_active
    assert players_on(two_days[0]) == ["alice", "bob"]


def test_is_active_changes_only_through_a_ban_in_the_admin(alice, admin_client):
    page = admin_client.get(f"/admin/auth/user/{alice.pk}/change/")

    assert page.status_code == 200
    assert 'name="is_active"' not in page.content.decode()


def test_the_moderation_log_is_read_only_in_the_admin(alice, daily, admin_client, admin_user):
    player_ban(player=alice, moderator=admin_user, reason="a bot")

    listing = admin_client.get("/admin/games/moderationaction/")
    adding = admin_client.get("/admin/games/moderationaction/add/")

    assert listing.status_code == 200
    assert "a bot" in listing.content.decode()
    assert adding.status_code == 403


def test_attempts_are_shown_read_only_in_the_admin(alice, daily, admin_client):
    start(client_for(alice))

    listing = admin_client.get("/admin/games/attempt/")

    assert listing.status_code == 200
    assert "alice" in listing.content.decode() and "open" in listing.content.decode()
    attempt = Attempt.objects.get()
    assert admin_client.get(f"/admin/games/attempt/{attempt.pk}/change/").status_code == 200
    assert admin_client.post(f"/admin/games/attempt/{attempt.pk}/change/", {}).status_code == 403
