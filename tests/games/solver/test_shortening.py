"""Shortening a win: reordering its moves, beam searches, and searching its end again.

Every shortened log is checked by the rules engine; no test depends on speed.
"""

from __future__ import annotations

from random import Random

import pytest

from games.rules import Deal, Game, replay
from games.solver import FIRST_WIN, PAR, position_of_game, solve_game, solve_position
from games.solver.deals import shorten_tail
from games.solver.polish import Polisher, Step, plan_of
from games.solver.search import Searcher, Weights
from games.solver.work import Cap

BUDGET = 600.0
BEAM = Weights(cover=3.0, loose=1.0, found=2.0)


def first_win(number: int) -> tuple[Game, tuple[str, ...]]:
    """Deal ``number`` and the solver's first win of it, not shortened nor reordered."""
    game = Game(Deal(number))
    answer = solve_position(position_of_game(game), work=FIRST_WIN, seconds=BUDGET)
    assert answer.result == "won"
    assert replay(Deal(number), answer.log).is_won
    return game, answer.log


def random_order(plan: list[Step], random: Random) -> list[Step]:
    """A random order of ``plan`` in which the moves on each column and suit keep their turn."""
    last: dict[int, int] = {}
    needs: list[set[int]] = []
    for index, step in enumerate(plan):
        needs.append({last[r] for r in step.touches if r in last})
        for resource in step.touches:
            last[resource] = index
    done: set[int] = set()
    order: list[Step] = []
    while len(order) < len(plan):
        ready = [i for i in range(len(plan)) if i not in done and needs[i] <= done]
        index = random.choice(ready)
        done.add(index)
        order.append(plan[index])
    return order


@pytest.mark.parametrize("number", [1, 2])
def test_any_order_that_keeps_each_column_and_suit_in_turn_still_wins(number: int) -> None:
    game, log = first_win(number)
    polisher = Polisher(game)
    plan = plan_of(game, log)
    random = Random(number)
    orders = [random_order(plan, random) for _ in range(5)]
    assert any(order != plan for order in orders)
    for order in orders:
        assert polisher.wins(polisher.write(order))


def test_touches_names_the_columns_and_the_suit_of_each_move() -> None:
    game, log = first_win(1)
    plan = plan_of(game, log)
    play = game.copy()
    tokens = iter(log)
    for step in plan:
        token = next(tokens)
        while token == "S":
            play.play(token)
            token = next(tokens)
        assert token == step.token
        before = play.table()
        play.play(token)
        after = play.table()
        columns = {i for i in range(9) if before["columns"][i] != after["columns"][i]}
        suits = {
            9 + f // 2 for f in range(8) if before["foundations"][f] != after["foundations"][f]
        }
        assert set(step.touches) == columns | suits


@pytest.mark.parametrize("number", [1, 3, 5])
def test_the_scheduled_order_wins_with_fewer_taps(number: int) -> None:
    game, log = first_win(number)
    polisher = Polisher(game)
    plan = plan_of(game, log)
    scheduled = polisher.write(polisher.schedule(plan))
    assert polisher.wins(scheduled)
    assert len(scheduled) - scheduled.count("S") == len(plan)  # the same moves
    assert scheduled.count("S") < 0.75 * log.count("S")


@pytest.mark.slow
def test_a_beam_search_finds_a_shorter_win_than_the_first_one() -> None:
    game, log = first_win(3)
    searcher = Searcher.from_position(position_of_game(game))
    cap = Cap(BUDGET)
    outcome = searcher.beam(width=10, weights=BEAM, max_nodes=20_000, cap=cap)
    assert outcome.won is not None and outcome.expanded > 0
    won = outcome.won.log()
    assert len(won) == outcome.won.g < len(log)
    assert replay(Deal(3), won).is_won
    # With the bound at that length it finds nothing as long (or nothing at all).
    again = searcher.beam(width=10, weights=BEAM, max_nodes=20_000, cap=cap, max_moves=len(won))
    assert again.won is None or again.won.g < len(won)


@pytest.mark.slow
def test_a_beam_search_is_deterministic() -> None:
    position = position_of_game(Game(Deal(4)))
    logs = [
        Searcher.from_position(position)
        .beam(width=5, weights=BEAM, max_nodes=5_000, cap=Cap(BUDGET))
        .won
        for _ in range(2)
    ]
    assert logs[0] is not None and logs[1] is not None
    assert logs[0].log() == logs[1].log()


@pytest.mark.slow
def test_searching_the_end_again_keeps_a_win_and_never_lengthens_it() -> None:
    game, log = first_win(2)
    shortened, expanded = shorten_tail(game, log, PAR, Cap(BUDGET))
    assert expanded > 0
    assert len(shortened) < len(log)
    assert replay(Deal(2), shortened).is_won


@pytest.mark.slow
def test_the_shortened_win_of_a_deal_is_much_shorter_than_the_first() -> None:
    game, first = first_win(6)
    answer = solve_game(game, seconds=BUDGET)
    assert answer.result == "won"
    assert answer.moves < 0.5 * len(first)
    assert replay(Deal(6), answer.log).is_won


def test_no_shortening_asked_leaves_the_first_win_as_found() -> None:
    game, first = first_win(8)
    answer = solve_game(game, work=FIRST_WIN, seconds=BUDGET)
    assert answer.log == first
