"""Deleting an account: the player is erased, their games leave every board, nothing else
is lost, and the username is reserved for a while."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from easyharp_site.accounts.deletion import TOMBSTONE_PREFIX
from easyharp_site.accounts.models import Account, ReservedUsername
from easyharp_site.errors import ServiceError
from games.models import DailyDeal, Game
from leaderboards.models import BoardEntry
from ranking.actions import game_submit, game_void, player_erase
from tests.fixtures import (
    STOCK_CYCLE,
    WIN_LOG,
    client_for,
    close_day,
    stored_game,
    submit,
    submit_ranked,
)

from .boards import assert_boards_equal_a_recomputation
from .conftest import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture
def yesterday(daily: DailyDeal) -> DailyDeal:
    return DailyDeal.objects.create(date=daily.date - datetime.timedelta(days=1), number=7)


@pytest.fixture
def played(alice: Any, bob: Any, make_player: Any, daily: DailyDeal, yesterday: DailyDeal) -> dict:
    """Alice leads both boards of two days; bob and carol play too."""
    carol = make_player("carol")
    games = {
        "alice_today": submit_ranked(client_for(alice), WIN_LOG).json()["id"],
        "alice_today_slow": submit(client_for(alice), STOCK_CYCLE + WIN_LOG).json()["id"],
        "bob_today": submit_ranked(client_for(bob), STOCK_CYCLE + WIN_LOG).json()["id"],
        "carol_today": submit_ranked(client_for(carol), WIN_LOG[:40]).json()["id"],
        "alice_practice": submit(client_for(alice), "S W9 S", deal="EH1-N-AAAAAAB").json()["id"],
    }
    games["alice_yesterday"] = stored_game(
        player=alice, daily=yesterday, score=900, moves=200, won=True
    ).pk
    games["bob_yesterday"] = stored_game(
        player=bob, daily=yesterday, score=800, moves=250, won=True
    ).pk
    return games


def delete(client: APIClient, password: str = PASSWORD) -> Any:
    return client.post("/api/auth/delete/", {"password": password}, format="json")


def test_a_deleted_players_games_leave_every_board_and_the_rest_stays(
    alice: Any, bob: Any, daily: DailyDeal, yesterday: DailyDeal, played: dict
) -> None:
    games_before = Game.objects.count()
    bobs_entries = set(BoardEntry.objects.filter(player=bob).values_list("pk", "game_id"))

    response = delete(client_for(alice))

    assert response.status_code == 204
    assert not BoardEntry.objects.filter(player=alice).exists()
    for day in (daily, yesterday):
        assert_boards_equal_a_recomputation(day.date)
    # Nothing else is lost: every game stays, and the others' entries are untouched.
    assert Game.objects.count() == games_before
    assert set(BoardEntry.objects.filter(player=bob).values_list("pk", "game_id")) == bobs_entries


def test_the_player_is_erased_and_signed_out_everywhere(alice: Any, played: dict) -> None:
    alice.email = "alice@example.org"
    alice.first_name = "Alice"
    alice.save()
    browser = Client()
    browser.force_login(alice)
    client = client_for(alice)

    delete(client)

    alice.refresh_from_db()
    assert alice.username.startswith(TOMBSTONE_PREFIX)
    assert (alice.email, alice.first_name, alice.is_active) == ("", "", False)
    assert not alice.has_usable_password()
    assert Account.objects.get(player=alice).deleted_at is not None
    assert not Token.objects.filter(user=alice).exists()
    assert client.get("/api/auth/me/").status_code == 401
    assert browser.get("/api/auth/me/").status_code == 401
    sign_in = APIClient().post(
        "/api/auth/token/", {"username": "alice", "password": PASSWORD}, format="json"
    )
    assert sign_in.status_code == 401


def test_replays_stay_public_but_no_longer_name_the_player(
    alice: Any, daily: DailyDeal, played: dict
) -> None:
    delete(client_for(alice))
    alice.refresh_from_db()
    game = played["alice_today"]
    board = APIClient().get(f"/api/daily/{daily.date}/leaderboard/").json()
    assert [entry["player"] for entry in board["entries"]] == ["bob", "carol"]
    close_day(daily)  # once the day has closed, its replays are everyone's

    detail = APIClient().get(f"/api/games/{game}/").json()
    page = Client().get(f"/replays/{game}/")

    assert detail["player"] == alice.username
    assert APIClient().get(f"/api/games/{game}/replay/").status_code == 200
    assert page.status_code == 200 and "alice" not in page.text
    assert APIClient().get("/api/players/alice/").status_code == 404
    assert APIClient().get(f"/api/players/{alice.username}/").status_code == 404


def test_the_username_is_reserved_then_free(alice: Any, played: dict, anon: APIClient) -> None:
    delete(client_for(alice))
    new = {"username": "ALICE", "password": "correct horse battery"}

    taken = anon.post("/api/auth/register/", new, format="json")
    assert taken.status_code == 409
    assert taken.json()["error"]["code"] == "username_taken"
    assert not ReservedUsername.objects.filter(digest__icontains="alice").exists()

    ReservedUsername.objects.update(reserved_until=timezone.now() - datetime.timedelta(seconds=1))
    free = anon.post("/api/auth/register/", new, format="json")
    assert free.status_code == 201
    assert free.json()["username"] == "ALICE"
    # The new player starts with nothing of the old one's.
    newcomer = get_user_model().objects.get(username="ALICE")
    assert not Game.objects.filter(player=newcomer).exists()


def test_no_one_can_sign_up_under_a_tombstone(alice: Any, anon: APIClient) -> None:
    delete(client_for(alice))
    alice.refresh_from_db()

    response = anon.post(
        "/api/auth/register/",
        {"username": f"{TOMBSTONE_PREFIX}0123456789ab", "password": "correct horse battery"},
        format="json",
    )

    assert response.status_code == 400
    assert "username" in response.json()["error"]["fields"]


def test_a_wrong_password_deletes_nothing(alice: Any, played: dict) -> None:
    response = delete(client_for(alice), "not my password")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "wrong_password"
    alice.refresh_from_db()
    assert alice.is_active and alice.username == "alice"
    assert BoardEntry.objects.filter(player=alice).exists()


def test_a_later_void_of_a_deleted_players_game_brings_nothing_back(
    alice: Any, daily: DailyDeal, played: dict
) -> None:
    delete(client_for(alice))

    game_void(game=Game.objects.get(pk=played["alice_today"]), reason="late")

    assert not BoardEntry.objects.filter(player=alice).exists()
    assert_boards_equal_a_recomputation(daily.date)


def test_a_submission_that_waited_for_the_deletion_is_refused_and_not_ranked(
    alice: Any, daily: DailyDeal
) -> None:
    # The request was signed in before the deletion committed (a stale player):
    # the service reads the player's row under its lock and finds the account closed.
    stale = get_user_model().objects.get(pk=alice.pk)
    player_erase(player=alice)

    with pytest.raises(ServiceError) as refused:
        game_submit(player=stale, deal=daily.deal_code, log=WIN_LOG)

    assert refused.value.status_code == 403
    assert not Game.objects.filter(player=alice).exists()
    assert not BoardEntry.objects.filter(player=alice).exists()
    assert_boards_equal_a_recomputation(daily.date)


def test_deleting_twice_changes_nothing_more(alice: Any, played: dict) -> None:
    player_erase(player=alice)
    alice.refresh_from_db()
    name = alice.username

    player_erase(player=alice)

    alice.refresh_from_db()
    assert alice.username == name


def test_the_page_deletes_the_account_once_the_password_is_confirmed(
    alice: Any, daily: DailyDeal, played: dict
) -> None:
    browser = Client()
    browser.force_login(alice)
    page = browser.get("/accounts/delete/")
    assert page.status_code == 200 and 'name="password"' in page.text

    wrong = browser.post("/accounts/delete/", {"password": "nope"})
    assert wrong.status_code == 200 and "The password is not right." in wrong.text
    assert get_user_model().objects.get(pk=alice.pk).is_active

    done = browser.post("/accounts/delete/", {"password": PASSWORD})
    assert done.status_code == 200 and 'id="account-deleted"' in done.text
    assert browser.get("/accounts/").status_code == 302  # signed out
    assert_boards_equal_a_recomputation(daily.date)
