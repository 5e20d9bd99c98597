"""How much work the solver does, counted; and the clock, only as a safety cap.

Every stage of a solve is bounded by a count (positions expanded by a search,
orders tried by the reordering), never by the time it took. So the answer, its
result, its log and so its move count, is a pure function of the position and
the `Work`: a deal gets the same par on a busy machine as on an idle one.

The clock only stops a solve that runs far past its usual time (`Cap`). A cap
that stopped any stage says so (`Solution.cut_short`): such an answer is still
checked, but it is not the answer the full work gives, and it may differ from
run to run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Work:
    """The work of one solve, stage by stage (see `games.solver.deals.solve_game`).

    ``decide`` bounds the positions the search for a first win may expand: a
    position neither won nor proven lost within it is "unknown". The other
    counts bound the shortening of a win; with all of them 0, the first win
    is answered as found.
    """

    decide: int
    beam_nodes: int = 0  # positions each beam search from the position may expand
    beam_width: int = 10  # positions kept per move count in those beams
    quick_tries: int = 0  # orders tried reordering each of the last wins found
    thorough_tries: int = 0  # then orders tried reordering the best of them
    tail_nodes: int = 0  # positions each beam search of the win's end may expand
    tail_tries: int = 0  # orders tried reordering each shorter end found

    def __post_init__(self) -> None:
        if self.decide <= 0:
            raise ValueError("the work must include deciding (decide > 0)")
        counts = (self.beam_nodes, self.quick_tries, self.thorough_tries)
        if min(*counts, self.tail_nodes, self.tail_tries) < 0 or self.beam_width <= 0:
            raise ValueError("work counts are not negative, a beam is at least 1 wide")

    @property
    def shortens(self) -> bool:
        """Whether a win is shortened at all (else the first win found is the answer)."""
        return any((self.beam_nodes, self.quick_tries, self.thorough_tries, self.tail_nodes))


# Deciding: the dives of `games.solver.decide` win every deal measured well
# within this many positions (docs/PERFORMANCE.md).
DECIDE = 100_000

# The par of a deal of the day: the work that makes its win short
# (docs/PERFORMANCE.md).
PAR = Work(
    decide=DECIDE,
    beam_nodes=8_000,
    beam_width=10,
    quick_tries=1_500,
    thorough_tries=25_000,
    tail_nodes=20_000,
    tail_tries=3_000,
)

# A hint: the stages of the par but the second search of the end, with beams 2
# wide instead of 10 and an eighth of the reordering: about a fifth of the par's
# time, for a win about 40 actions longer from the start of a deal (deals 1..30;
# on deals 1..24 a width of 3 and more reordering gave no shorter wins for half
# as much time again). Deciding stops at a fifth of the par's positions: a hint
# must answer in seconds.
HINT = Work(
    decide=20_000,
    beam_nodes=8_000,
    beam_width=2,
    quick_tries=1_000,
    thorough_tries=3_000,
)

# Deciding only: the first win found, as found.
FIRST_WIN = Work(decide=DECIDE)


# The default cap: more than twice the slowest full `PAR` solve measured on a
# busy machine (docs/PERFORMANCE.md).
CAP_SECONDS = 300.0


class Cap:
    """The clock as a safety cap: stages ask `over()` between pieces of work.

    Once over, it stays over (every later stage stops at once) and `hit`
    records that the work was cut short. The solver reads the clock nowhere
    else.
    """

    __slots__ = ("start", "deadline", "hit")

    def __init__(self, seconds: float) -> None:
        if not seconds > 0:
            raise ValueError("the time cap must be positive")
        self.start = time.monotonic()
        self.deadline = self.start + seconds
        self.hit = False

    def over(self) -> bool:
        """Whether the time is up (and from then on, always True)."""
        if not self.hit and time.monotonic() >= self.deadline:
            self.hit = True
        return self.hit

    def elapsed(self) -> float:
        """Seconds since the cap was set."""
        return time.monotonic() - self.start
