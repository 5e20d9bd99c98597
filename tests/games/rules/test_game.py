"""The Game object: its table dict (the contract other parts read), copy, repr."""

from __future__ import annotations

import json

import pytest

from games.rules import RULES_VERSION, Action, Deal, Game, InvalidActionError, replay


def test_the_table_is_the_documented_json_ready_dict() -> None:
    table = Game(Deal(1)).table()
    assert list(table) == [
        "deal", "columns", "stock", "waste", "waste_top", "foundations",
        "score", "moves", "won", "undo_left",
    ]  # fmt: skip
    assert json.loads(json.dumps(table)) == table
    assert table["deal"] == "EH1-N-AAAAAAB"
    assert table["columns"][0] == {"down": 0, "up": ["6D"]}
    assert table["columns"][8] == {"down": 8, "up": ["JC"]}
    assert (table["stock"], table["waste"], table["waste_top"]) == (59, 0, None)
    assert [f["suit"] for f in table["foundations"]] == list("SSHHDDCC")
    assert all(f == {"suit": f["suit"], "count": 0, "top": None} for f in table["foundations"])
    assert (table["score"], table["moves"], table["won"], table["undo_left"]) == (0, 0, False, 0)


def test_the_table_follows_play() -> None:
    game = replay("EH1-N-AAAAAAB", "S W9 S")
    table = game.table()
    assert table["columns"][8] == {"down": 8, "up": ["JC", "TH"]}
    assert (table["stock"], table["waste"], table["waste_top"]) == (57, 1, "5C")
    assert (table["score"], table["moves"], table["undo_left"]) == (5, 3, 3)


def test_a_game_starts_from_a_deal_a_code_or_a_number() -> None:
    assert Game(Deal(5)).table() == Game("eh1-n-aaaaaaf").table() == Game(5).table()
    with pytest.raises(ValueError):
        Game("EH1-N-AAAAAAA")
    with pytest.raises(ValueError):
        Game(0)


def test_a_copy_is_independent() -> None:
    game = replay("EH1-N-AAAAAAB", "S W9")
    copy = game.copy()
    copy.play_log("S S U")
    assert game.log == ["S", "W9"] and copy.log == ["S", "W9", "S", "S", "U"]
    assert game.table()["stock"] == 58 and copy.table()["stock"] == 57
    copy.play_log("U U")
    assert game.undo_left == 2 and copy.undo_left == 1
    assert copy.table()["columns"][8]["up"] == ["JC"]
    assert game.table()["columns"][8]["up"] == ["JC", "TH"]


def test_the_repr_can_be_pasted_back() -> None:
    game = replay("EH1-N-AAAAAAB", "s w9 S u")
    assert repr(game) == "replay(Deal(1), 'S W9 S U')"
    again = eval(repr(game), {"Deal": Deal, "replay": replay})
    assert again.position() == game.position() and again.log == game.log


def test_play_takes_an_action_value_too() -> None:
    game = Game(1)
    game.play(Action.parse("s"))
    game.play(Action.parse("W9"))
    assert game.log == ["S", "W9"]
    with pytest.raises(InvalidActionError):
        game.play("W10")
    assert game.is_legal("S") and not game.is_legal("W1") and not game.is_legal("??")


def test_the_rules_version_is_eh1() -> None:
    assert RULES_VERSION == "EH1"
