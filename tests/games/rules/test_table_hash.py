"""The table's hash: what the copy check compares, so what must and must not change it."""

from __future__ import annotations

import json

import pytest

from games.rules import (
    Game,
    IllegalActionError,
    InvalidActionError,
    replay,
    replay_hashed,
    table_hashes,
)
from tests.paths import GAME_VECTORS

VECTORS = [json.loads(line) for line in GAME_VECTORS.read_text().splitlines()]
WON = next(vector for vector in VECTORS if vector.get("won"))


def test_the_hash_is_a_stable_signed_64_bit_number() -> None:
    # Stored in the database: a change of encoding would orphan every fingerprint.
    assert Game(1).table_hash() == -666283456140274223
    assert -(2**63) <= replay(1, "S W9").table_hash() < 2**63


def test_score_moves_taps_and_the_undo_history_are_not_part_of_it() -> None:
    game = replay(1, "S W9")
    moved = replay(1, "S W9 U W9 S S S")

    assert moved.table_hash() == game.table_hash()
    assert (moved.moves, moved.undo_left) != (game.moves, game.undo_left)
    assert replay(1, "S").table_hash() == Game(1).table_hash()


def test_a_move_changes_it() -> None:
    assert replay(1, "S W9").table_hash() != Game(1).table_hash()


def test_the_order_of_independent_moves_does_not_change_it() -> None:
    log = WON["log"].split()
    # The waste's 7 of diamonds to its foundation, and a card from column 3 to 1.
    at = 216
    first, second = log[at : at + 2]
    assert (first, second) == ("WF7", "31")
    swapped = [*log[:at], second, first, *log[at + 2 :]]

    assert (
        replay(WON["deal"], swapped[: at + 2]).table_hash()
        == replay(WON["deal"], log[: at + 2]).table_hash()
    )


@pytest.mark.parametrize(
    "vector",
    [vector for vector in VECTORS if "refused_at" not in vector],
    ids=lambda vector: vector["deal"],
)
def test_table_hashes_is_the_hash_after_each_action_but_taps_and_undos(vector) -> None:
    # The vectors' logs undo, recycle and take cards back from the foundations:
    # what table_hashes reads again after each kind of action must be enough.
    log = vector["log"].split()
    game = Game(vector["deal"])
    expected = [game.table_hash()]
    for token in log:
        game.play(token)
        if token.upper() not in ("S", "U"):
            expected.append(game.table_hash())

    assert table_hashes(vector["deal"], log) == expected
    # The replay that hashes plays the same game as `replay`: a submission keeps it.
    hashed, hashes = replay_hashed(vector["deal"], log)
    played = replay(vector["deal"], log)
    assert hashes == expected
    assert (hashed.position(), hashed.log, hashed.moves, hashed.undo_left, hashed.is_won) == (
        played.position(),
        played.log,
        played.moves,
        played.undo_left,
        played.is_won,
    )


def test_table_hashes_holds_every_table_a_game_passes_through() -> None:
    log = WON["log"].split()
    game = Game(WON["deal"])
    each = [game.table_hash()]
    for token in log:
        game.play(token)
        each.append(game.table_hash())

    assert set(table_hashes(WON["deal"], log)) == set(each)


def test_table_hashes_refuses_a_log_as_replay_does() -> None:
    with pytest.raises(IllegalActionError) as refused:
        table_hashes(1, "S W9 W9")
    assert refused.value.index == 3
    with pytest.raises(InvalidActionError) as unreadable:
        table_hashes(1, "S ZZ")
    assert unreadable.value.index == 2


@pytest.mark.parametrize("log", ["S W9 W9", "S S S W9 S S ZZ", "S S W9 U U U", "S S S 12 S"])
def test_table_hashes_finds_the_refused_action_among_stock_taps(log: str) -> None:
    with pytest.raises(ValueError) as by_replay:
        replay(1, log)
    with pytest.raises(ValueError) as by_hashes:
        table_hashes(1, log)

    assert type(by_hashes.value) is type(by_replay.value)
    assert by_hashes.value.index == by_replay.value.index  # type: ignore[attr-defined]
