"""Deciding a position: restarts with growing budgets, then beam searches for shorter wins."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from games.solver.layout import Layout
from games.solver.search import Node, Searcher, Weights
from games.solver.work import CAP_SECONDS, PAR, Cap, Work

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
# (`Searcher.beam`). Two rankings, because a beam this narrow misses wins that
# the other one finds: each counts every card off the foundations twice, or
# only pool cards twice (the best two of eight rankings tried on deals 1..20).
# Their width and work are the `Work`'s.
_RANKINGS = (
    Weights(cover=3.0, loose=1.0, found=2.0),
    Weights(cover=3.0, loose=1.0, pool=1.0),
)


@dataclass(frozen=True, slots=True)
class Solution:
    """The answer for one position.

    ``log`` holds the actions of a win from the position (empty unless won);
    ``moves`` is its move count (every action of the log counts one);
    ``nodes`` counts positions expanded, ``seconds`` the time spent,
    ``decided_seconds`` the time until the result was known (a win is then
    shortened until ``seconds``). ``cut_short`` says that the time cap
    stopped the work before it was done: the answer (an "unknown", or a win
    shortened less) is then not the one the full work gives, and may differ
    from run to run; without it, the answer is a pure function of the
    position and the work.
    """

    result: Result
    log: tuple[str, ...]
    nodes: int
    seconds: float
    decided_seconds: float | None = None  # when the answer was known (before shortening)
    # Other, longer wins found on the way (worst first): material for shortening.
    others: tuple[tuple[str, ...], ...] = ()
    cut_short: bool = False

    @property
    def moves(self) -> int:
        """The move count of the winning log (0 when not won)."""
        return len(self.log)


def solve_position(position: Layout, *, work: Work = PAR, seconds: float = CAP_SECONDS) -> Solution:
    """Search ``position`` for a win, then beam searches for shorter ones.

    The work is counted (`Work.decide` positions to decide, `Work.beam_nodes`
    for each beam); ``seconds`` only caps it (`Solution.cut_short`). "lost"
    is answered only when a complete search ran out of positions.
    """
    return decide(position, work, Cap(seconds))


def decide(position: Layout, work: Work, cap: Cap) -> Solution:
    """`solve_position` under a ``cap`` that the caller goes on using."""
    searcher = Searcher.from_position(position)
    if position.is_won:
        return Solution("won", (), 0, 0.0, 0.0)
    spent = 0
    attempt = 0
    best: Node | None = None
    while best is None and spent < work.decide and not cap.over():
        budget = _FIRST_BUDGET << (attempt // _DOUBLING)
        outcome = searcher.run(
            complete=attempt % 4 == 1,
            weights=replace(_DIVE, seed=attempt),
            max_nodes=min(budget, work.decide - spent),
            cap=cap,
        )
        spent += outcome.expanded
        if outcome.won is not None:
            best = outcome.won
        elif outcome.exhausted:
            return Solution("lost", (), spent, cap.elapsed())
        attempt += 1
    if best is None:
        return Solution("unknown", (), spent, cap.elapsed(), cut_short=cap.hit)
    decided = cap.elapsed()
    others: list[tuple[str, ...]] = []
    for weights in _RANKINGS if work.beam_nodes else ():
        if cap.over():
            break
        outcome = searcher.beam(
            width=work.beam_width, weights=weights, max_nodes=work.beam_nodes, cap=cap
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
        cap.elapsed(),
        decided,
        tuple(sorted(others, key=len, reverse=True)),
        cut_short=cap.hit,
    )
