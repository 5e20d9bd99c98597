"""A signed-in player downloads all their games as one JSON file."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from rest_framework.test import APIClient

from games.models import Game
from ranking.actions import game_void
from tests.fixtures import WIN, WIN_LOG, client_for, submit, submit_ranked

pytestmark = pytest.mark.django_db


def test_the_export_holds_every_game_of_the_player_and_only_theirs(
    alice: Any, bob: Any, daily: Any
) -> None:
    client = client_for(alice)
    won = submit_ranked(client, WIN_LOG).json()["id"]
    practice = submit(client, "S W9 S", deal="EH1-N-AAAAAAB").json()["id"]
    voided = submit(client, WIN_LOG[:10]).json()["id"]
    game_void(game=Game.objects.get(pk=voided), reason="test")
    submit(client_for(bob), WIN_LOG)

    response = client.get("/api/auth/export/")

    assert response.status_code == 200
    assert response["Content-Disposition"].startswith('attachment; filename="easyharp-')
    body = response.json()
    assert body["player"] == "alice"
    assert [game["id"] for game in body["games"]] == [won, practice, voided]  # oldest first
    first = body["games"][0]
    assert first == {
        "id": won,
        "deal": "EH1-N-AAAAAAE",
        "deal_number": 4,
        "ranked": True,
        "assisted": False,
        "duration_ms": Game.objects.get(pk=won).duration_ms,
        "times": None,
        "daily": daily.date.isoformat(),
        "log": " ".join(WIN_LOG),
        "actions": len(WIN_LOG),
        "score": WIN["score"],
        "moves": WIN["moves"],
        "won": True,
        "rules_version": "EH1",
        "submitted_at": first["submitted_at"],
        "voided_at": None,
        "void_reason": "",
        "replay": f"{settings.SITE_URL}/replays/{won}/",
    }
    stored = Game.objects.get(pk=won).created_at
    assert first["submitted_at"].replace("Z", "+00:00") == stored.isoformat()
    assert isinstance(first["duration_ms"], int) and first["duration_ms"] >= 0
    assert body["games"][1]["ranked"] is False and body["games"][1]["daily"] is None
    assert body["games"][1]["duration_ms"] is None
    assert body["games"][2]["voided_at"] is not None and body["games"][2]["void_reason"] == "test"


def test_the_browser_downloads_it_from_the_account_page(alice: Any, daily: Any) -> None:
    submit(client_for(alice), WIN_LOG)
    browser = Client()
    browser.force_login(alice)

    page = browser.get("/accounts/")
    assert 'href="/api/auth/export/"' in page.text
    response = browser.get("/api/auth/export/")

    assert response.status_code == 200
    assert len(response.json()["games"]) == 1


def test_a_player_without_games_gets_an_empty_list(alice: Any) -> None:
    assert client_for(alice).get("/api/auth/export/").json()["games"] == []


def test_the_export_needs_a_signed_in_player(anon: APIClient) -> None:
    response = anon.get("/api/auth/export/")

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
