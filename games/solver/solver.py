"""Deciding a position: restarts with growing budgets, then shortening the win."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

from games.solver.position import Position
from games.solver.search import Node, Searcher, Weights

Result = Literal["won", "lost", "unknown"]

# The attempts cycle through these rankings; each round doubles the node budget.
# Pruned attempts find most wins fast; the complete one is the only kind that
# can prove a loss, and it also wins positions that need a foundation take-back.
_ATTEMPTS: tuple[tuple[bool, Weights], ...] = (
    (False, Weights()),
    (True, Weights()),
    (False, Weights(down=10.0, cover=2.5, empty=5.0)),
    (False, Weights(found=2.0, down=4.0, cover=1.0)),
)
_FIRST_BUDGET = 1500

# Shortening: searches that weigh the moves already made, limited to paths
# shorter than the best win so far.
_SHORTEN: tuple[Weights, ...] = (
    Weights(moves=0.5),
    Weights(moves=1.0, down=8.0, cover=2.0),
    Weights(moves=0.3),
    Weights(moves=0.8, pool=1.0),
)


@dataclass(frozen=True, slots=True)
class Solution:
    """The answer for one position.

    ``log`` holds the actions of a win from the position (empty unless won);
    ``moves`` is its move count (every action of the log counts one);
    ``nodes`` counts positions expanded, ``seconds`` the time spent.
    """

    result: Result
    log: tuple[str, ...]
    nodes: int
    seconds: float

    @property
    def moves(self) -> int:
        """The move count of the winning log (0 when not won)."""
        return len(self.log)


def solve_position(
    position: Position,
    *,
    seconds: float = 10.0,
    nodes: int = 10_000_000,
    shorten_seconds: float | None = None,
) -> Solution:
    """Search ``position`` for a win within ``seconds`` and ``nodes`` expansions.

    "lost" is answered only when a complete search ran out of positions. After
    a win, the search keeps looking for shorter wins for up to
    ``shorten_seconds`` (by default a tenth of the budget, and never past it).
    """
    if seconds <= 0 or nodes <= 0:
        raise ValueError("the budget must be positive")
    start = time.monotonic()
    deadline = start + seconds
    searcher = Searcher.from_position(position)
    if position.is_won:
        return Solution("won", (), 0, 0.0)
    spent = 0
    budget = _FIRST_BUDGET
    round_index = 0
    best: Node | None = None
    while best is None and spent < nodes and time.monotonic() < deadline:
        complete, weights = _ATTEMPTS[round_index % len(_ATTEMPTS)]
        outcome = searcher.run(
            complete=complete,
            weights=weights,
            max_nodes=min(budget, nodes - spent),
            deadline=deadline,
        )
        spent += outcome.expanded
        if outcome.won is not None:
            best = outcome.won
        elif outcome.exhausted:
            return Solution("lost", (), spent, time.monotonic() - start)
        round_index += 1
        if round_index % len(_ATTEMPTS) == 0:
            budget *= 2
    if best is None:
        return Solution("unknown", (), spent, time.monotonic() - start)
    if shorten_seconds is None:
        shorten_seconds = seconds / 10
    shorten_deadline = min(deadline, time.monotonic() + shorten_seconds)
    for weights in _SHORTEN:
        if time.monotonic() >= shorten_deadline or spent >= nodes:
            break
        outcome = searcher.run(
            complete=False,
            weights=weights,
            max_nodes=min(20 * _FIRST_BUDGET, nodes - spent),
            deadline=shorten_deadline,
            max_moves=best.g,
        )
        spent += outcome.expanded
        if outcome.won is not None:
            best = outcome.won
    return Solution("won", tuple(best.log()), spent, time.monotonic() - start)
