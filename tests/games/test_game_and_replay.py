"""GET /api/games/{id}/ and /api/games/{id}/replay/: every game is public by link."""

from __future__ import annotations

import gzip
import json
from typing import Any

import jsonschema
import pytest

from games.rules import Deal, Game
from tests.fixtures import DEAL, WIN, WIN_LOG, client_for, close_day, submit
from tests.games.replays import replay_tables

pytestmark = pytest.mark.django_db

# A short log with a recycle, a move and an undo: every kind of frame.
SHORT_LOG = WIN_LOG[:12] + ["U"]


@pytest.fixture
def game_id(alice, daily) -> int:
    """A game of a day that has closed since: public to everyone (docs/FAIR_PLAY.md)."""
    game = submit(client_for(alice), SHORT_LOG).json()["id"]
    close_day(daily)
    return game


def test_anyone_can_read_a_game_with_its_log(anon, game_id):
    response = anon.get(f"/api/games/{game_id}/")

    assert response.status_code == 200
    body = response.json()
    assert body["id"] == game_id
    assert body["player"] == "alice"
    assert body["log"].split() == [token.upper() for token in SHORT_LOG]
    assert body["voided"] is False


def test_the_replay_rebuilds_the_table_after_every_action_as_the_engine_plays_it(anon, game_id):
    response = anon.get(f"/api/games/{game_id}/replay/")

    assert response.status_code == 200
    replay = response.json()
    assert (replay["game"], replay["deal"], replay["rules_version"]) == (game_id, DEAL, "EH1")
    assert [step["token"] for step in replay["steps"]] == [token.upper() for token in SHORT_LOG]
    engine = Game(Deal.from_code(DEAL))
    assert replay["start"] == engine.table()
    tables = replay_tables(replay)
    for index, token in enumerate(SHORT_LOG, start=1):
        engine.play(token)
        assert tables[index] == engine.table()


def test_a_step_carries_only_what_its_action_changed(anon, game_id):
    steps = anon.get(f"/api/games/{game_id}/replay/").json()["steps"]

    # The ace of spades goes from column 4 to foundation 1, and column 4 turns
    # up its next card: one column, one foundation, score, moves, undo.
    assert steps[0] == {
        "token": "4F1",
        "score": 15,
        "moves": 1,
        "undo_left": 1,
        "columns": [[3, 2, 0, "4D"]],
        "foundations": [[0, 1, "AS"]],
    }
    # A tap moves a card from the stock to the waste; undo takes it back.
    assert steps[-2] == {
        "token": "S",
        "stock": 49,
        "waste": 9,
        "waste_top": "JS",
        "moves": 12,
        "undo_left": 12,
    }
    assert steps[-1] == {"token": "U", "stock": 50, "waste": 8, "waste_top": "3C", "undo_left": 11}


def test_the_last_table_of_a_win_is_won_with_the_stored_score(anon, alice, daily):
    game_id = submit(client_for(alice), WIN_LOG).json()["id"]
    close_day(daily)

    last = replay_tables(anon.get(f"/api/games/{game_id}/replay/").json())[-1]

    assert last["won"] is True
    assert (last["score"], last["moves"]) == (WIN["score"], WIN["moves"])


def test_the_replay_is_json_whatever_the_accept_header(anon, game_id):
    """The browsable API rendered a 20,000-action replay as 81 MB of HTML."""
    for accept in ("text/html", "text/html,application/xhtml+xml;q=0.9", "image/png"):
        response = anon.get(f"/api/games/{game_id}/replay/", HTTP_ACCEPT=accept)
        assert response.status_code == 200
        assert response["Content-Type"] == "application/json"
        assert response.json()["steps"]
    refused = anon.get("/api/games/999999/replay/", HTTP_ACCEPT="text/html")
    assert refused.status_code == 404
    assert refused.json()["error"]["code"] == "not_found"


def test_the_replay_is_compressed_for_clients_that_accept_gzip(anon, game_id):
    plain = anon.get(f"/api/games/{game_id}/replay/")
    response = anon.get(f"/api/games/{game_id}/replay/", HTTP_ACCEPT_ENCODING="gzip")

    assert "Content-Encoding" not in plain
    assert response["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in response["Vary"]
    assert json.loads(gzip.decompress(response.content)) == plain.json()


def test_pages_with_a_csrf_token_are_not_compressed(client, daily):
    """Compressing a secret next to text an attacker chooses leaks it (BREACH):
    only the replay, which holds neither, is compressed."""
    response = client.get("/play/", HTTP_ACCEPT_ENCODING="gzip")

    assert response.status_code == 200
    assert "csrf" in response.content.decode().lower()
    assert "Content-Encoding" not in response


def test_a_replay_of_the_longest_game_stays_small(anon, alice, daily, settings):
    """GAME_MAX_ACTIONS taps and recycles: 20,001 tables, which took 13.6 MB of JSON in full."""
    log = ["S"] * settings.GAME_MAX_ACTIONS
    game_id = submit(client_for(alice), log).json()["id"]
    close_day(daily)

    plain = anon.get(f"/api/games/{game_id}/replay/")
    packed = anon.get(f"/api/games/{game_id}/replay/", HTTP_ACCEPT_ENCODING="gzip")

    assert len(plain.json()["steps"]) == settings.GAME_MAX_ACTIONS
    assert len(plain.content) < 1_500_000
    assert len(packed.content) < 150_000


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


def test_the_schema_describes_the_replay_as_served(anon, game_id):
    """Every field the replay sends is in the OpenAPI schema, with its type."""
    schema = anon.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/api/games/{game_id}/replay/"]["get"]
    response = operation["responses"]["200"]["content"]["application/json"]["schema"]
    document = strict_json_schema({**response, "components": schema["components"]})

    jsonschema.validate(anon.get(f"/api/games/{game_id}/replay/").json(), document)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"game": game_id, "frames": []}, document)


def strict_json_schema(node: Any) -> Any:
    """An OpenAPI 3.0 schema as JSON Schema (`nullable` as a null type), with no
    property left undocumented (`additionalProperties: false` on every object)."""
    if isinstance(node, list):
        return [strict_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {key: strict_json_schema(value) for key, value in node.items()}
    if converted.pop("nullable", False):
        converted = {"anyOf": [converted, {"type": "null"}]}
    if converted.get("type") == "object" and "properties" in converted:
        converted["additionalProperties"] = False
    return converted


def test_replays_may_be_cached_by_proxies(anon, game_id):
    response = anon.get(f"/api/games/{game_id}/replay/")

    assert response["Cache-Control"] == "public, max-age=86400"
