"""Actions and the move-log notation.

Every readable token is known in advance (S, U and 18 sources × 19 places), so
the engine reads a token with one dict lookup into a pre-built tuple
``(kind, a, b, token, undo records)``; `Action` is the readable value over the same table.

Places: ``1``..``9`` columns, ``W`` the waste (source only), ``F`` the first
foundation that accepts the card (destination only), ``F1``..``F8`` a named
foundation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, TypeAlias

from .errors import InvalidActionError

__all__ = ["Action", "parse_log", "format_log"]

# Action kinds. The last three are readable but never legal: the engine refuses
# them with their own reason codes.
STOCK: Final = 0
UNDO: Final = 1
# The two actions that are one letter: a tap of the stock, and an undo.
STOCK_TOKEN: Final = "S"
UNDO_TOKEN: Final = "U"
COL_COL: Final = 2  # a column -> b column
COL_FND: Final = 3  # a column -> b foundation (-1: the first that accepts)
WASTE_COL: Final = 4  # b column
WASTE_FND: Final = 5  # b foundation (-1: the first that accepts)
FND_COL: Final = 6  # a foundation -> b column
FND_FND: Final = 7
TO_WASTE: Final = 8
SAME_COL: Final = 9

ANY_FOUNDATION: Final = -1

# Kinds that appear only in undo records.
KING_RUN: Final = 10  # a column -> b empty column, the whole king-headed run
RECYCLE: Final = 11  # the waste back into the stock

#: What undo needs to take an action back: (kind, a, b, points, turned, scored),
#: where `turned` says a face-down card was turned up and `scored` that the card
#: earned its first +10 (its fair-play mark must be cleared again).
Record: TypeAlias = tuple[int, int, int, int, int, int]

#: (kind, a, b, canonical token, undo records). Every record the action can
#: leave is built here once, so playing an action allocates nothing.
Compiled: TypeAlias = tuple[int, int, int, str, tuple[Record, ...]]

_SOURCES: Final = [str(n) for n in range(1, 10)] + ["W"] + [f"F{n}" for n in range(1, 9)]
_TARGETS: Final = [str(n) for n in range(1, 10)] + ["W", "F"] + [f"F{n}" for n in range(1, 9)]


def _records(kind: int, a: int, b: int) -> tuple[Record, ...]:
    if kind == STOCK:
        return ((STOCK, 0, 0, 0, 0, 0), (RECYCLE, 0, 0, 0, 0, 0))
    if kind == COL_COL:
        # [turned] for one card, [2 + turned] for a king-headed run.
        return tuple((k, a, b, 5 * t, t, 0) for k in (COL_COL, KING_RUN) for t in (0, 1))
    if kind == COL_FND:
        # [4 * slot + 2 * scored + turned]: with "F" the slot is known only at play time.
        return tuple(
            (COL_FND, a, slot, 10 * scored + 5 * t, t, scored)
            for slot in range(8)
            for scored in (0, 1)
            for t in (0, 1)
        )
    if kind == WASTE_COL:
        return ((WASTE_COL, 0, b, 5, 0, 0),)
    if kind == WASTE_FND:
        # [2 * slot + scored]
        return tuple(
            (WASTE_FND, 0, slot, 10 * scored, 0, scored) for slot in range(8) for scored in (0, 1)
        )
    if kind == FND_COL:
        return ((FND_COL, a, b, 0, 0, 0),)
    return ()


def _compile(source: str, target: str) -> Compiled:
    token = source + target
    kind, a, b = _kind(source, target)
    return (kind, a, b, token, _records(kind, a, b))


def _kind(source: str, target: str) -> tuple[int, int, int]:
    if target == "W":
        return (TO_WASTE, 0, 0)
    if source.startswith("F") and target.startswith("F"):
        return (FND_FND, 0, 0)
    if target.startswith("F"):
        b = int(target[1:]) - 1 if len(target) > 1 else ANY_FOUNDATION
        if source == "W":
            return (WASTE_FND, 0, b)
        return (COL_FND, int(source) - 1, b)
    b = int(target) - 1
    if source == "W":
        return (WASTE_COL, 0, b)
    if source.startswith("F"):
        return (FND_COL, int(source[1:]) - 1, b)
    a = int(source) - 1
    return (SAME_COL if a == b else COL_COL, a, b)


#: Every readable token, upper case, -> its compiled action.
TOKENS: Final[dict[str, Compiled]] = {
    STOCK_TOKEN: (STOCK, 0, 0, STOCK_TOKEN, _records(STOCK, 0, 0)),
    UNDO_TOKEN: (UNDO, 0, 0, UNDO_TOKEN, ()),
    **{s + t: _compile(s, t) for s in _SOURCES for t in _TARGETS},
}


def compile_token(token: str) -> Compiled:
    """The compiled action of one token (any case, surrounding blanks ignored)."""
    compiled = compile_or_none(token)
    if compiled is None:
        raise InvalidActionError(str(token))
    return compiled


def compile_or_none(token: object) -> Compiled | None:
    """The compiled action of one token, or None when it is not one."""
    # ASCII only: str.upper() would also read e.g. the long s "ſ" as "S".
    if not isinstance(token, str) or not token.isascii():
        return None
    return TOKENS.get(token.strip().upper())


def compile_log(log: str | Iterable[str]) -> list[Compiled | None]:
    """The compiled actions of a log, None where a token is unreadable."""
    if isinstance(log, str) and log.isascii():
        # Upper-casing the whole text once is cheaper than token by token.
        return list(map(TOKENS.get, log.upper().split()))
    tokens = log.split() if isinstance(log, str) else list(log)
    try:
        # Tokens already in canonical form (a server's, upper-cased) are looked up
        # in C; only the others are read one by one.
        compiled = list(map(TOKENS.get, tokens))
    except TypeError:  # an unhashable token
        return [compile_or_none(token) for token in tokens]
    if None in compiled:
        for index, action in enumerate(compiled):
            if action is None:
                compiled[index] = compile_or_none(tokens[index])
    return compiled


def written_token(log: str | Iterable[str], index: int) -> str:
    """Token `index` (0-based) of a log as the player wrote it, for error messages."""
    tokens = log.split() if isinstance(log, str) else list(log)
    token = tokens[index]
    return token.strip() if isinstance(token, str) else repr(token)


def parse_log(log: str | Iterable[str]) -> list[str]:
    """The canonical tokens of a log (text, or a list of tokens).

    Reading ignores case and any run of blanks; an unreadable token raises
    `InvalidActionError` with its 1-based index.

    >>> parse_log("  37 wf\\t3f2\\n u ")
    ['37', 'WF', '3F2', 'U']
    """
    if not isinstance(log, str):
        log = list(log)
    compiled = compile_log(log)
    for index, action in enumerate(compiled):
        if action is None:
            raise InvalidActionError(written_token(log, index), index + 1)
    return [action[3] for action in compiled if action is not None]


def format_log(tokens: str | Iterable[str]) -> str:
    """The canonical text of a log: canonical tokens separated by single spaces.

    >>> format_log(["s", " w3 ", "3f2"])
    'S W3 3F2'
    """
    return " ".join(parse_log(tokens))


class Action:
    """One action of the notation, an immutable value with one canonical text form.

    >>> Action.parse("f27")
    Action.parse('F27')
    >>> action = Action.parse("F27")
    >>> action.source, action.target, str(action)
    ('F2', '7', 'F27')
    """

    __slots__ = ("_compiled",)

    def __init__(self, compiled: Compiled) -> None:
        self._compiled = compiled

    @classmethod
    def parse(cls, text: str) -> Action:
        """Read one token (any case, surrounding blanks ignored); raises InvalidActionError."""
        return cls(compile_token(text))

    @property
    def token(self) -> str:
        """The canonical token, e.g. ``"3F2"``."""
        return self._compiled[3]

    @property
    def is_stock(self) -> bool:
        """True for ``S``, the stock tap."""
        return self._compiled[0] == STOCK

    @property
    def is_undo(self) -> bool:
        """True for ``U``."""
        return self._compiled[0] == UNDO

    @property
    def source(self) -> str | None:
        """The place a card comes from ("1".."9", "W", "F1".."F8"); None for S and U."""
        token = self.token
        if token in ("S", "U"):
            return None
        return token[:2] if token[0] == "F" else token[0]

    @property
    def target(self) -> str | None:
        """The place a card goes to ("1".."9", "W", "F", "F1".."F8"); None for S and U."""
        source = self.source
        return None if source is None else self.token[len(source) :]

    def __str__(self) -> str:
        return self.token

    def __repr__(self) -> str:
        return f"Action.parse({self.token!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Action):
            return NotImplemented
        return self.token == other.token

    def __hash__(self) -> int:
        return hash(("Action", self.token))
