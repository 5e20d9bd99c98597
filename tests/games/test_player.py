"""GET /api/players/{username}/: a player's daily results and recent games."""

from __future__ import annotations

import pytest

from tests.fixtures import DEAL, WIN, WIN_LOG, client_for, play_assisted, rewind, start, submit

pytestmark = pytest.mark.django_db


def test_it_lists_the_players_games_and_daily_results(anon, alice, bob, daily):
    for player, minutes in ((bob, 10), (alice, 5)):
        start(client_for(player))
        rewind(player, minutes * 60)
    submit(client_for(bob), WIN_LOG)
    won = submit(client_for(alice), WIN_LOG).json()
    practice = submit(client_for(alice), WIN_LOG[:40]).json()

    response = anon.get("/api/players/alice/")

    assert response.status_code == 200
    body = response.json()
    assert body["username"] == "alice"
    assert [(g["id"], g["ranked"]) for g in body["games"]] == [
        (practice["id"], False),
        (won["id"], True),
    ]
    assert body["games"][0]["duration_ms"] is None
    assert 5 * 60_000 <= body["games"][1]["duration_ms"] < 6 * 60_000
    # The ranked win is alice's entry on both boards, ahead of bob's identical
    # but slower win.
    entry = {
        "rank": 1,
        "player": "alice",
        "score": WIN["score"],
        "moves": WIN["moves"],
        "won": True,
        "duration_ms": won["duration_ms"],
        "game": won["id"],
        "submitted_at": won["created_at"],
    }
    assert body["daily"] == [
        {
            "date": daily.date.isoformat(),
            "deal": DEAL,
            "score": entry,
            "moves": entry,
            "assisted": False,
            "held": False,
        }
    ]


def test_a_day_of_an_assisted_game_is_listed_assisted_without_entries(anon, alice, daily):
    game = play_assisted(alice, WIN_LOG)

    body = anon.get("/api/players/alice/").json()

    assert body["daily"] == [
        {
            "date": daily.date.isoformat(),
            "deal": DEAL,
            "score": None,
            "moves": None,
            "assisted": True,
            "held": False,
        }
    ]
    assert [(g["id"], g["ranked"], g["assisted"]) for g in body["games"]] == [(game.pk, True, True)]


def test_a_player_without_games_has_empty_lists(anon, alice):
    body = anon.get("/api/players/alice/").json()

    assert (body["games"], body["daily"]) == ([], [])


def test_an_unknown_player_is_404(anon):
    response = anon.get("/api/players/nobody/")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
