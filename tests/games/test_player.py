"""GET /api/players/{username}/: a player's daily results and recent games."""

from __future__ import annotations

import pytest

from tests.fixtures import DEAL, WIN, WIN_LOG, client_for, submit

pytestmark = pytest.mark.django_db


def test_it_lists_the_players_games_and_daily_results(anon, alice, bob, daily):
    submit(client_for(bob), WIN_LOG)
    unfinished = submit(client_for(alice), WIN_LOG[:40]).json()
    won = submit(client_for(alice), WIN_LOG).json()

    response = anon.get("/api/players/alice/")

    assert response.status_code == 200
    body = response.json()
    assert body["username"] == "alice"
    assert [game["id"] for game in body["games"]] == [won["id"], unfinished["id"]]
    # The win is alice's best on both boards, behind bob's earlier identical win.
    entry = {
        "rank": 2,
        "player": "alice",
        "score": WIN["score"],
        "moves": WIN["moves"],
        "won": True,
        "game": won["id"],
        "submitted_at": won["created_at"],
    }
    assert body["daily"] == [
        {"date": daily.date.isoformat(), "deal": DEAL, "score": entry, "moves": entry}
    ]


def test_a_player_without_games_has_empty_lists(anon, alice):
    body = anon.get("/api/players/alice/").json()

    assert (body["games"], body["daily"]) == ([], [])


def test_an_unknown_player_is_404(anon):
    response = anon.get("/api/players/nobody/")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
