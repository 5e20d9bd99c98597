"""A solver for Easy Harp: win a deal, or any position, within a budget.

>>> from games.solver import solve
>>> answer = solve("EH1-N-AAAAAAB", seconds=10)
>>> answer.result
'won'

`solve` answers "won" with a log that the rules engine replays to a win,
"lost" only when a complete search has shown that no sequence of actions wins,
and "unknown" when the budget ran out first. Pure Python, no Django.
"""

from __future__ import annotations

from games.solver.deals import Hint, hint, position_of_game, solve, solve_game
from games.solver.decide import Result, Solution, solve_position
from games.solver.layout import Layout

__all__ = [
    "Hint",
    "hint",
    "Layout",
    "Result",
    "Solution",
    "position_of_game",
    "solve",
    "solve_game",
    "solve_position",
]
