"""Deciding a position: restarts with growing budgets, then shortening the win."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Literal

from games.solver.layout import Layout
from games.solver.search import Node, Searcher, Weights

Result = Literal["won", "lost", "unknown"]

# Deciding: many short greedy dives, each with its own random spread of the
# priorities, rather than one long search: a greedy search that took a wrong
# turn early spends its whole budget next to it. Every fourth attempt is a
# complete search, the only kind that can prove a loss (small positions are
# decided by it at once). The node budget doubles every ten attempts.
_DIVE = Weights(cover=3.0, loose=1.0, moves=0.05, noise=10.0)
_FIRST_BUDGET = 300
_DOUBLING = 10

# Shortening: beam searches that count every action, stock taps included, and
# keep the most promising positions among those reached with the same count
# (`Searcher.beam`): each a (width, ranking, positions expanded at most). Two
# rankings, because a beam this narrow misses wins that the other one finds:
# each counts every card off the foundations twice, or only pool cards twice
# (the best two of eight rankings tried on deals 1..20).
_BEAMS = (
    (10, Weights(cover=3.0, loose=1.0, found=2.0), 8_000),
    (10, Weights(cover=3.0, loose=1.0, pool=1.0), 8_000),
)


@dataclass(frozen=True, slots=True)
class Solution:
    """The answer for one position.

    ``log`` holds the actions of a win from the position (empty unless won);
    ``moves`` is its move count (every action of the log counts one);
    ``nodes`` counts positions expanded, ``seconds`` the time spent,
    ``decided_seconds`` the time until the result was known (a win is then
    shortened until ``seconds``).
    """

    result: Result
    log: tuple[str, ...]
    nodes: int
    seconds: float
    decided_seconds: float | None = None  # when the answer was known (before shortening)
    # Other, longer wins found on the way (worst first): material for shortening.
    others: tuple[tuple[str, ...], ...] = ()

    @property
    def moves(self) -> int:
        """The move count of the winning log (0 when not won)."""
        return len(self.log)


def solve_position(
    position: Layout,
    *,
    seconds: float = 10.0,
    nodes: int = 10_000_000,
    shorten_seconds: float | None = None,
) -> Solution:
    """Search ``position`` for a win within ``seconds`` and ``nodes`` expansions.

    "lost" is answered only when a complete search ran out of positions. After
    a win, two beam searches look for shorter wins: a fixed amount of work,
    cut short only after ``shorten_seconds`` (by default the whole budget,
    and never past it).
    """
    if seconds <= 0 or nodes <= 0:
        raise ValueError("the budget must be positive")
    start = time.monotonic()
    deadline = start + seconds
    searcher = Searcher.from_position(position)
    if position.is_won:
        return Solution("won", (), 0, 0.0, 0.0)
    spent = 0
    attempt = 0
    best: Node | None = None
    while best is None and spent < nodes and time.monotonic() < deadline:
        budget = _FIRST_BUDGET << (attempt // _DOUBLING)
        outcome = searcher.run(
            complete=attempt % 4 == 1,
            weights=replace(_DIVE, seed=attempt),
            max_nodes=min(budget, nodes - spent),
            deadline=deadline,
        )
        spent += outcome.expanded
        if outcome.won is not None:
            best = outcome.won
        elif outcome.exhausted:
            return Solution("lost", (), spent, time.monotonic() - start)
        attempt += 1
    if best is None:
        return Solution("unknown", (), spent, time.monotonic() - start)
    decided = time.monotonic() - start
    if shorten_seconds is None:
        shorten_seconds = seconds
    shorten_deadline = min(deadline, time.monotonic() + shorten_seconds)
    others: list[tuple[str, ...]] = []
    # A fixed amount of work, the deadline only as a cap: with time to spare
    # the same position always gets the same answer (a day's par must not
    # depend on how busy the machine was).
    for width, weights, budget in _BEAMS:
        if time.monotonic() >= shorten_deadline or spent >= nodes:
            break
        outcome = searcher.beam(
            width=width,
            weights=weights,
            max_nodes=min(budget, nodes - spent),
            deadline=shorten_deadline,
        )
        spent += outcome.expanded
        if outcome.won is not None:
            if outcome.won.g < best.g:
                others.append(tuple(best.log()))
                best = outcome.won
            else:
                others.append(tuple(outcome.won.log()))
    return Solution(
        "won",
        tuple(best.log()),
        spent,
        time.monotonic() - start,
        decided,
        tuple(sorted(others, key=len, reverse=True)),
    )
