"""PATCH/GET /api/auth/settings/: a player's game settings kept with the account."""

from __future__ import annotations

from typing import Any

from django.test import Client

from easyharp_site.accounts.models import Account
from ranking.actions import player_erase
from tests.fixtures import client_for
from tests.web.test_pages import page_config


def test_a_new_account_keeps_no_settings(alice: Any) -> None:
    response = client_for(alice).get("/api/auth/settings/")
    assert response.status_code == 200
    assert response.json() == {}


def test_settings_are_kept_one_by_one(alice: Any) -> None:
    api = client_for(alice)
    assert api.patch("/api/auth/settings/", {"fourColour": True}, format="json").json() == {
        "fourColour": True
    }
    answer = api.patch(
        "/api/auth/settings/", {"doubleClick": False, "cardStyle": "large"}, format="json"
    )
    assert answer.json() == {"fourColour": True, "doubleClick": False, "cardStyle": "large"}
    assert api.get("/api/auth/settings/").json() == answer.json()


def test_a_bad_value_is_refused_and_nothing_is_kept(alice: Any) -> None:
    api = client_for(alice)
    answer = api.patch(
        "/api/auth/settings/", {"fourColour": True, "cardStyle": "huge"}, format="json"
    )
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "invalid"
    assert "cardStyle" in answer.json()["error"]["fields"]
    assert api.get("/api/auth/settings/").json() == {}


def test_settings_need_a_signed_in_player(db: None) -> None:
    assert client_for(None).get("/api/auth/settings/").status_code in (401, 403)


def test_the_pages_hand_the_accounts_settings_to_the_browser(alice: Any, daily: Any) -> None:
    client_for(alice).patch("/api/auth/settings/", {"fourColour": True}, format="json")
    browser = Client()
    browser.force_login(alice)
    config = page_config(browser.get("/play/"))
    assert config["settings"] == {"fourColour": True}
    assert config["settings_url"] == "/api/auth/settings/"
    assert page_config(Client().get("/play/"))["settings"] is None


def test_a_deleted_account_keeps_no_settings(alice: Any) -> None:
    client_for(alice).patch("/api/auth/settings/", {"fourColour": True}, format="json")
    player_erase(player=alice)
    assert Account.objects.get(player=alice).settings == {}
