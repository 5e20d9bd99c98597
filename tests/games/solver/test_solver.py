"""The solver: its wins replay to wins, its losses agree with an exhaustive search.

Time caps are generous: the machine running the tests may be busy, and a test
must not depend on speed (speed is measured by bench/solver.py).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from games.rules import Deal, Game, IllegalActionError, replay
from games.solver import (
    FIRST_WIN,
    HINT,
    Layout,
    Work,
    hint,
    position_of_game,
    solve,
    solve_game,
    solve_position,
)
from tests.games.rules.positions import arrange
from tests.paths import GAME_VECTORS

VECTORS = GAME_VECTORS
BUDGET = 600.0
# The first win, reordered a little: every stage but the searches for shorter wins.
LIGHT = replace(FIRST_WIN, quick_tries=300, thorough_tries=300)


def brute_force_wins(game: Game, limit: int = 200_000) -> bool:
    """Whether any sequence of the engine's legal actions wins (undo left out).

    A depth-first walk over every table reachable with `legal_actions()`,
    each table visited once; it knows nothing of the solver's shortcuts.
    """
    seen = {game.position()[:5]}
    stack = [game]
    while stack:
        current = stack.pop()
        for token in current.legal_actions():
            if token == "U":
                continue
            child = current.copy()
            child.play(token)
            if child.is_won:
                return True
            key = child.position()[:5]
            if key not in seen:
                seen.add(key)
                stack.append(child)
        assert len(seen) < limit, "the position is too large for an exhaustive search"
    return False


# Small positions, every card placed. Kings sit on face-down queens of their
# own suit, and the last column hides the ten of hearts under a jack.
KINGS_ON_QUEENS = ["qs KS", "qs KS", "qh KH", "qh KH", "qd KD", "qd KD", "qc KC", "qc KC"]
RANKS = "A23456789TJQK"


def pile(suit: str, height: int) -> str:
    return " ".join(rank + suit for rank in RANKS[:height])


def piles(*heights: int) -> list[str]:
    """The eight foundations (S S H H D D C C) built up to ``heights``."""
    return [pile(suit, height) for suit, height in zip("SSHHDDCC", heights, strict=True)]


def locked(stock: str = "9C TC JC") -> Game:
    """No way to reach the ten of hearts: the jack on it has nowhere to go.

    The three clubs in the stock still give the search something to do: onto
    the foundation, onto the jack of hearts, with foundation cards taken back
    onto them.
    """
    return arrange(
        columns=[*KINGS_ON_QUEENS, "th JH"],
        stock=stock,
        foundations=piles(11, 11, 11, 9, 11, 11, 11, 8),
    )


def unlockable() -> Game:
    """As `locked`, but one queen of spades is in the stock: the jack of hearts can go on it."""
    return arrange(
        columns=["KS", *KINGS_ON_QUEENS[1:], "th JH"],
        stock="9C QS TC JC",
        foundations=piles(11, 11, 11, 9, 11, 11, 11, 8),
    )


def no_moves_at_all() -> Game:
    return arrange(
        columns=[*KINGS_ON_QUEENS, "th JH"],
        foundations=piles(11, 11, 11, 9, 11, 11, 11, 11),
    )


def needs_a_card_back() -> Game:
    """Won only by taking a black jack back from a foundation onto the queen of diamonds.

    The ten of hearts lies on the nine it needs to reach its foundation, and
    every black jack is on a foundation.
    """
    return arrange(
        columns=["9h TH", "QD", "KC"],
        foundations=piles(13, 11, 13, 8, 13, 11, 13, 12),
        stock="JH QH KH QS KS KD",
    )


LOST = {"locked": locked, "no_moves_at_all": no_moves_at_all}
WON = {"unlockable": unlockable, "needs_a_card_back": needs_a_card_back}


@pytest.mark.parametrize("name", sorted(LOST))
def test_lost_agrees_with_an_exhaustive_search(name: str) -> None:
    game = LOST[name]()
    assert not brute_force_wins(game)
    answer = solve_game(game, seconds=BUDGET)
    assert answer.result == "lost"
    assert answer.log == ()


@pytest.mark.parametrize("name", sorted(WON))
def test_small_winnable_positions_are_won(name: str) -> None:
    game = WON[name]()
    answer = solve_game(game, seconds=BUDGET)
    assert answer.result == "won"
    check = game.copy()
    check.play_log(answer.log)
    assert check.is_won
    assert check.moves - game.moves == answer.moves


def test_a_win_that_needs_a_card_back_takes_one_back() -> None:
    answer = solve_game(needs_a_card_back(), seconds=BUDGET)
    assert any(token.startswith("F") for token in answer.log)


@pytest.mark.parametrize(
    "number", [1, 2, 3, 4, 5, 26, 4242, pytest.param(999_999, marks=pytest.mark.slow)]
)
def test_a_won_deal_replays_to_a_win(number: int) -> None:
    answer = solve(number, work=LIGHT, seconds=BUDGET)
    assert answer.result == "won"
    game = replay(Deal(number), answer.log)
    assert game.is_won
    assert game.moves == answer.moves == len(answer.log)
    assert answer.nodes > 0
    assert answer.decided_seconds is not None and answer.decided_seconds <= answer.seconds


@pytest.mark.slow
def test_shortening_never_lengthens_the_win() -> None:
    first = solve(7, work=FIRST_WIN, seconds=BUDGET)
    shortened = solve(7, work=HINT, seconds=BUDGET)
    assert first.result == shortened.result == "won"
    assert shortened.moves <= first.moves
    assert replay(Deal(7), shortened.log).is_won


def accepted_vector(deal: str) -> str:
    for line in VECTORS.read_text().splitlines():
        vector = json.loads(line)
        if vector["deal"] == deal and "refused_at" not in vector and not vector["won"]:
            return str(vector["log"])
    raise LookupError(deal)


def test_solving_from_the_middle_of_a_game_continues_its_log() -> None:
    # A log of another implementation, with undos and recycles in it.
    prefix = accepted_vector("EH1-N-AABQOKF")
    played = replay("EH1-N-AABQOKF", prefix)
    assert "U" in played.log and played.table()["waste"] + played.table()["stock"] < 59
    answer = solve("EH1-N-AABQOKF", prefix, work=FIRST_WIN, seconds=BUDGET)
    assert answer.result == "won"
    game = replay("EH1-N-AABQOKF", [*played.log, *answer.log])
    assert game.is_won
    assert game.moves == played.moves + answer.moves


def test_the_position_keeps_the_pool_order_and_the_waste() -> None:
    game = replay(1, "S W9 S S")  # the first card played, two more turned up
    position = position_of_game(game)
    stock = [card % 52 for card in Deal(1).stock]
    assert position.waste == 2
    assert position.pool == tuple(stock[1:])
    assert position.down == (0, 1, 2, 3, 4, 5, 6, 7, 8)
    assert position.columns[8][-1] == stock[0]


def test_a_bad_position_is_refused() -> None:
    start = position_of_game(Game(1))
    with pytest.raises(ValueError, match="exactly twice"):
        Layout(start.columns, start.down, start.pool[1:], 0, start.foundations)
    with pytest.raises(ValueError, match="top card"):
        Layout(start.columns, (1,) * 9, start.pool, 0, start.foundations)
    with pytest.raises(ValueError, match="cap"):
        solve_position(start, seconds=0)
    with pytest.raises(ValueError, match="decide"):
        solve_position(start, work=Work(decide=0))


def test_an_exhausted_budget_is_unknown_not_lost() -> None:
    answer = solve(15, work=Work(decide=3))
    assert answer.result == "unknown"
    assert answer.log == ()
    assert not answer.cut_short


@pytest.mark.slow
def test_a_hint_is_the_first_action_of_a_win() -> None:
    prefix = ["S", "S"]
    answer = hint(1, prefix, seconds=BUDGET)
    assert answer.result == "move"
    assert answer.action is not None and answer.moves_to_win is not None
    game = replay(1, [*prefix, answer.action])
    # The hinted action keeps a win in reach.
    assert solve_game(game, work=FIRST_WIN, seconds=BUDGET).result == "won"


def test_a_hint_on_a_lost_position_says_so() -> None:
    game = locked()
    answer = solve_game(game, seconds=BUDGET)
    assert answer.result == "lost"


def test_a_hint_after_a_win_has_nothing_to_play() -> None:
    win = solve(2, work=FIRST_WIN, seconds=BUDGET)
    assert hint(2, win.log).result == "won"


def test_a_hint_for_a_refused_log_raises_the_engine_error() -> None:
    with pytest.raises(IllegalActionError) as refused:
        hint(1, "S 19")
    assert refused.value.index == 2
