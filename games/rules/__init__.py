"""Easy Harp rules engine (EH1): pure Python, exact to RULES.md, no Django.

>>> from games.rules import Deal, Game, replay
>>> game = replay(Deal.from_code("EH1-N-AAAAAAB"), "S W9")
>>> game.score, game.moves, game.is_won
(5, 2, False)
"""

from __future__ import annotations

from typing import Final

from .actions import STOCK_TOKEN, UNDO_TOKEN, Action, format_log, parse_log
from .cards import Card
from .deal import DEAL_MAX, Deal
from .errors import (
    DEAL_REASONS,
    REASONS,
    ActionError,
    IllegalActionError,
    InvalidActionError,
    InvalidDealError,
)
from .game import (
    FOUNDATION_SUITS,
    UNDO_LIMIT,
    Game,
    Position,
    foundations_course,
    replay,
    replay_hashed,
    table_hashes,
)

RULES_VERSION: Final = "EH1"

__all__ = [
    "RULES_VERSION",
    "DEAL_MAX",
    "FOUNDATION_SUITS",
    "UNDO_LIMIT",
    "STOCK_TOKEN",
    "UNDO_TOKEN",
    "DEAL_REASONS",
    "REASONS",
    "Action",
    "ActionError",
    "Card",
    "Deal",
    "Game",
    "IllegalActionError",
    "InvalidActionError",
    "InvalidDealError",
    "Position",
    "format_log",
    "foundations_course",
    "parse_log",
    "replay",
    "replay_hashed",
    "table_hashes",
]
