"""From the rules engine to the solver and back: positions in, checked logs out."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal

from games.rules import Deal, Game, replay
from games.solver.decide import Solution, solve_position
from games.solver.layout import Layout
from games.solver.polish import Polisher
from games.solver.search import Searcher, Weights

# Orders tried when shortening a win (see `Polisher.polish`): a quick polish of
# each of the last wins found, then a thorough one of the best. One to two
# seconds in all on this machine.
QUICK_TRIES = 1_500
THOROUGH_TRIES = 25_000

# Last, the end of the win is searched again from points along it (30 %, 50 %
# and 70 % of its actions): with less left to play, a beam three times as wide
# fits in the same work. A shorter end found is polished on its own.
TAIL_CUTS = (0.3, 0.5, 0.7)
TAIL_WIDTH = 30
TAIL_WEIGHTS = Weights(cover=3.0, loose=1.0, found=2.0)
TAIL_NODES = 20_000
TAIL_TRIES = 3_000


def position_of_game(game: Game) -> Layout:
    """The solver's view of a game's table, face-down cards included."""
    table = game.position()
    # The engine keeps the stock top-last; the pool starts with the waste
    # (bottom to top), then the stock in the order taps turn it up.
    pool = tuple(card % 52 for card in table.waste) + tuple(
        card % 52 for card in reversed(table.stock)
    )
    return Layout(
        columns=tuple(
            tuple(card % 52 for card in (*down, *up))
            for down, up in zip(table.down, table.up, strict=True)
        ),
        down=tuple(len(down) for down in table.down),
        pool=pool,
        waste=len(table.waste),
        foundations=tuple(len(pile) for pile in table.foundations),
    )


def solve_game(
    game: Game,
    *,
    seconds: float = 10.0,
    nodes: int = 10_000_000,
    shorten_seconds: float | None = None,
) -> Solution:
    """Search for a win from the game's current table.

    After a win, a fixed amount of work goes to shortening it: beam searches
    from the start (`games.solver.decide`), reordering the best wins so that
    they tap the stock less (`games.solver.polish`), then searching the end of
    the best one again (`shorten_tail`). It is cut short only after
    ``shorten_seconds`` (by default the whole budget, never past it). A won
    answer is checked by playing its log on a copy of the game: the engine,
    not the solver, has the last word on what is legal.
    """
    if game.is_won:
        return Solution("won", (), 0, 0.0, 0.0)
    start = time.monotonic()
    if shorten_seconds is None:
        shorten_seconds = seconds
    solution = solve_position(
        position_of_game(game), seconds=seconds, nodes=nodes, shorten_seconds=shorten_seconds
    )
    if solution.result != "won":
        return solution
    decided = solution.decided_seconds if solution.decided_seconds is not None else 0.0
    deadline = min(start + seconds, start + decided + shorten_seconds)
    log, expanded = solution.log, 0
    if shorten_seconds > 0:
        polisher = Polisher(game)
        # The shortest raw win does not always polish best: give the last few
        # wins found a quick polish each, then polish the best of them fully.
        # Each polish does a fixed amount of work (the deadline is only a cap,
        # and its first step, the schedule, takes milliseconds and always
        # runs), so that with time to spare a position always gets the same
        # answer.
        candidates = [*solution.others[-2:], solution.log]
        polished = [
            polisher.polish(log, deadline, thorough=False, tries=QUICK_TRIES) for log in candidates
        ]
        log = polisher.polish(min(polished, key=len), deadline, tries=THOROUGH_TRIES)
        log, expanded = shorten_tail(game, log, deadline)
    check = game.copy()
    check.play_log(" ".join(log))
    if not check.is_won:
        raise AssertionError(f"the solver's log does not win: {' '.join(log)}")
    return replace(
        solution,
        log=log,
        nodes=solution.nodes + expanded,
        seconds=time.monotonic() - start,
        others=(),
    )


def shorten_tail(game: Game, log: tuple[str, ...], deadline: float) -> tuple[tuple[str, ...], int]:
    """``log`` (a win from ``game``) with its end replaced by shorter ones where
    a beam search from a point along it finds one; and the positions expanded.

    A fixed amount of work (`TAIL_NODES`, `TAIL_TRIES` per cut), ``deadline``
    only caps it.
    """
    expanded = 0
    for fraction in TAIL_CUTS:
        if time.monotonic() >= deadline:
            break
        cut = int(len(log) * fraction)
        middle = game.copy()
        middle.play_log(" ".join(log[:cut]))
        outcome = Searcher.from_position(position_of_game(middle)).beam(
            width=TAIL_WIDTH,
            weights=TAIL_WEIGHTS,
            max_nodes=TAIL_NODES,
            deadline=deadline,
            max_moves=len(log) - cut,
        )
        expanded += outcome.expanded
        if outcome.won is None:
            continue
        tail = Polisher(middle).polish(tuple(outcome.won.log()), deadline, tries=TAIL_TRIES)
        if cut + len(tail) < len(log):
            log = (*log[:cut], *tail)
    return log, expanded


def solve(
    deal: Deal | str | int,
    log: str | Iterable[str] = (),
    *,
    seconds: float = 10.0,
    nodes: int = 10_000_000,
    shorten_seconds: float | None = None,
) -> Solution:
    """Search for a win of ``deal`` from the table after ``log`` (the whole game by default).

    ``log`` is replayed by the engine first, so a refused log raises the
    engine's `IllegalActionError` / `InvalidActionError` (both `ValueError`).
    The answer's log continues ``log``: ``replay(deal, log + answer.log)`` wins.
    """
    return solve_game(
        replay(deal, log), seconds=seconds, nodes=nodes, shorten_seconds=shorten_seconds
    )


@dataclass(frozen=True, slots=True)
class Hint:
    """The next action of a win, or why there is none.

    ``result`` is "move" (``action`` holds the next action of a win, and
    ``moves_to_win`` the length of that win), "lost" (no sequence of actions
    wins from here), "unknown" (the budget ran out) or "won" (the game is
    already won: nothing is left to play).
    """

    result: Literal["move", "lost", "unknown", "won"]
    action: str | None
    moves_to_win: int | None
    seconds: float


def hint(
    deal: Deal | str | int,
    log: str | Iterable[str] = (),
    *,
    seconds: float = 2.0,
    nodes: int = 10_000_000,
) -> Hint:
    """The next action of a win from the table after ``log``.

    A refused ``log`` raises the engine's error (a `ValueError`). The win is
    shortened with a quarter of the budget, so the hint heads for a short win
    rather than the first one found.
    """
    game = replay(deal, log)
    if game.is_won:
        return Hint("won", None, None, 0.0)
    solution = solve_game(game, seconds=seconds, nodes=nodes, shorten_seconds=seconds / 4)
    if solution.result == "won":
        return Hint("move", solution.log[0], solution.moves, solution.seconds)
    return Hint(solution.result, None, None, solution.seconds)
