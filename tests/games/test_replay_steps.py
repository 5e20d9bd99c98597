"""The replay's compact steps against the engine: applied in order to `start`,
they rebuild `Game.table()` after every action of every vector game, and they
carry nothing that did not change.

The browser's decoding (`games/static/games/frames.js`) is checked by
`tests/js/frames.test.mjs` against tables the engine computed, in
`tests/js/replays.json`; the last tests here keep that file current.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any

from tests.games.replays import (
    FIXTURE,
    engine_tables,
    finished_vector_games,
    js_fixture,
    replay_of,
    replay_tables,
)


@functools.cache
def replayed() -> list[tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]]:
    """Every finished vector game with its replay and the engine's tables (read once)."""
    return [
        (game, replay_of(game["deal"], game["log"]), engine_tables(game["deal"], game["log"]))
        for game in finished_vector_games()
    ]


def test_the_steps_rebuild_every_table_of_every_vector_game() -> None:
    assert len(replayed()) > 100
    for game, replay, expected in replayed():
        assert replay["start"] == expected[0]
        assert len(replay["steps"]) == len(game["log"].split())
        assert replay_tables(replay) == expected, game["deal"]
        if game["won"]:
            assert replay_tables(replay)[-1]["won"] is True


def test_a_step_names_its_action_in_canonical_form() -> None:
    replay = replay_of("EH1-N-AABTKAX", "  6f6 58 s ")
    assert [step["token"] for step in replay["steps"]] == ["6F6", "58", "S"]


def changes(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    return {key for key in after if after[key] != before[key]}


def test_a_step_carries_only_what_its_action_changed() -> None:
    for game, replay, tables in replayed():
        for before, after, step in zip(tables, tables[1:], replay["steps"], strict=False):
            assert set(step) - {"token"} == changes(before, after), (game["deal"], step)
            for index, down, kept, *cards in step.get("columns", []):
                old, new = before["columns"][index], after["columns"][index]
                assert old != new
                assert (down, old["up"][:kept] + cards) == (new["down"], new["up"])
                # Only the cards that changed are sent: the next kept card differed.
                if kept < len(old["up"]) and cards:
                    assert old["up"][kept] != cards[0]
            for slot, count, top in step.get("foundations", []):
                assert before["foundations"][slot] != after["foundations"][slot]
                assert {"count": count, "top": top} == {
                    key: after["foundations"][slot][key] for key in ("count", "top")
                }


def test_the_browser_fixture_is_what_the_server_serves_now() -> None:
    """`tests/js/replays.json`: refresh it with UPDATE_REPLAY_FIXTURE=1 when the shape changes."""
    text = js_fixture()
    if os.environ.get("UPDATE_REPLAY_FIXTURE"):
        FIXTURE.write_text(text)
    assert FIXTURE.read_text() == text, "stale: run with UPDATE_REPLAY_FIXTURE=1"


def test_the_browser_fixture_has_every_kind_of_step() -> None:
    steps = [step for game in json.loads(FIXTURE.read_text()) for step in game["replay"]["steps"]]
    keys = {key for step in steps for key in step}
    assert keys >= {"token", "stock", "waste", "waste_top", "score", "moves", "undo_left"}
    assert {"columns", "foundations"} <= keys
    assert any(step.get("waste_top", "") is None for step in steps), "the waste emptied"
    assert any(step["token"] == "U" for step in steps)
    edits = [edit for step in steps for edit in step.get("columns", [])]
    assert any(len(edit) == 3 for edit in edits), "a card left a column"
    assert any(len(edit) > 3 and edit[2] > 0 for edit in edits), "a card put on others"
    assert any(edit[2] == 0 and len(edit) > 3 for edit in edits), "a card turned up or alone"
    tops = [top for step in steps for _, _, top in step.get("foundations", [])]
    assert None in tops, "a foundation emptied again"
    assert any(step["token"].startswith("F") for step in steps), "a card back from a foundation"
