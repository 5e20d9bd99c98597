"""A solver for Easy Harp: win a deal, or any position, with a fixed amount of work.

>>> from games.solver import FIRST_WIN, solve
>>> answer = solve("EH1-N-AAAAAAB", work=FIRST_WIN)
>>> answer.result
'won'

`solve` answers "won" with a log that the rules engine replays to a win,
"lost" only when a complete search has shown that no sequence of actions wins,
and "unknown" when the work ran out first. The work is counted, not timed
(`Work`): the same position and work always give the same answer, so a deal's
par does not depend on the machine. The time only caps it, and an answer that
the cap cut short says so (`Solution.cut_short`). Pure Python, no Django.
"""

from __future__ import annotations

from games.solver.deals import Hint, hint, position_of_game, solve, solve_game
from games.solver.decide import Result, Solution, solve_position
from games.solver.layout import Layout
from games.solver.work import CAP_SECONDS, FIRST_WIN, HINT, PAR, Work

__all__ = [
    "CAP_SECONDS",
    "FIRST_WIN",
    "HINT",
    "Hint",
    "hint",
    "Layout",
    "PAR",
    "Result",
    "Solution",
    "Work",
    "position_of_game",
    "solve",
    "solve_game",
    "solve_position",
]
