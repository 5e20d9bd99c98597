"""GET /api/games/{id}/ and /api/games/{id}/replay/: every game is public by link."""

from __future__ import annotations

import pytest

from games.rules import Deal, Game
from tests.games.conftest import DEAL, WIN, WIN_LOG, client_for, submit

pytestmark = pytest.mark.django_db

# A short log with a recycle, a move and an undo: every kind of frame.
SHORT_LOG = WIN_LOG[:12] + ["U"]


@pytest.fixture
def game_id(alice, daily) -> int:
    return submit(client_for(alice), SHORT_LOG).json()["id"]


def test_anyone_can_read_a_game_with_its_log(anon, game_id):
    response = anon.get(f"/api/games/{game_id}/")

    assert response.status_code == 200
    body = response.json()
    assert body["id"] == game_id
    assert body["player"] == "alice"
    assert body["log"].split() == [token.upper() for token in SHORT_LOG]
    assert body["voided"] is False


def test_the_replay_has_a_frame_per_action_that_matches_the_engine(anon, game_id):
    response = anon.get(f"/api/games/{game_id}/replay/")

    assert response.status_code == 200
    body = response.json()
    assert body["deal"] == DEAL
    frames = body["frames"]
    assert len(frames) == len(SHORT_LOG) + 1
    engine = Game(Deal.from_code(DEAL))
    assert frames[0] == {
        "index": 0,
        "token": None,
        "score": 0,
        "moves": 0,
        "table": engine.table(),
    }
    for index, token in enumerate(SHORT_LOG, start=1):
        engine.play(token)
        frame = frames[index]
        assert (frame["index"], frame["token"]) == (index, token.upper())
        assert (frame["score"], frame["moves"]) == (engine.score, engine.moves)
        assert frame["table"] == engine.table()


def test_the_last_frame_of_a_win_is_won_with_the_stored_score(anon, alice, daily):
    game_id = submit(client_for(alice), WIN_LOG).json()["id"]

    frames = anon.get(f"/api/games/{game_id}/replay/").json()["frames"]

    assert frames[-1]["table"]["won"] is True
    assert (frames[-1]["score"], frames[-1]["moves"]) == (WIN["score"], WIN["moves"])


def test_an_unknown_game_is_404(anon):
    for path in ("/api/games/999999/", "/api/games/999999/replay/"):
        response = anon.get(path)
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"


def test_a_game_of_an_unknown_rules_version_is_not_replayed_under_other_rules(anon, game_id):
    from games.models import Game as StoredGame

    StoredGame.objects.filter(pk=game_id).update(rules_version="EH9")

    response = anon.get(f"/api/games/{game_id}/replay/")

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "rules_version_unsupported"


def test_replays_may_be_cached_by_proxies(anon, game_id):
    response = anon.get(f"/api/games/{game_id}/replay/")

    assert response["Cache-Control"] == "public, max-age=86400"
