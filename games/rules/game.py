"""The game: a mutable table with cheap undo, and `replay` for whole logs.

The hot path (`Game._run`) works on ints and lists only: a card is its physical
id, a column is two lists (face-down and face-up ids, bottom to top), the stock
is a list whose last element turns up next. Each action leaves one pre-built
undo record (see `actions.Record`), so playing allocates nothing per action and
the undo history stays a deque of shared tuples. Refusals are detected before
anything changes; only then does the slow, readable `Game._check` work out why.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any, Final, NamedTuple

from .actions import (
    ANY_FOUNDATION,
    COL_COL,
    COL_FND,
    FND_COL,
    FND_FND,
    KING_RUN,
    RECYCLE,
    SAME_COL,
    STOCK,
    TO_WASTE,
    TOKENS,
    UNDO,
    WASTE_COL,
    WASTE_FND,
    Action,
    Compiled,
    Record,
    compile_log,
    compile_or_none,
    written_token,
)
from .cards import CARD_COUNT, KING, SUIT_NAMES, SUITS, card_text, is_red, rank_of
from .deal import Deal
from .errors import IllegalActionError, InvalidActionError

__all__ = [
    "Game",
    "Position",
    "replay",
    "replay_hashed",
    "table_hashes",
    "UNDO_LIMIT",
    "FOUNDATION_SUITS",
]

#: The history keeps the undo records of the 100 most recent actions not yet
#: taken back (older ones fall off); each undo uses one up.
UNDO_LIMIT: Final = 100
#: The suit each foundation F1..F8 is reserved to.
FOUNDATION_SUITS: Final = "SSHHDDCC"

# Per-card lookup tables for the hot path. A card c goes on a column whose top
# card is d exactly when _NEED[c] == _KEY[d] (d one rank higher, other colour).
_RANK: Final = tuple(rank_of(c) for c in range(CARD_COUNT))
_KEY: Final = tuple(rank_of(c) * 2 + is_red(c) for c in range(CARD_COUNT))
_NEED: Final = tuple((rank_of(c) + 1) * 2 + (not is_red(c)) for c in range(CARD_COUNT))
#: The first of the two foundations of the card's suit.
_SLOT: Final = tuple(c % 52 // 13 * 2 for c in range(CARD_COUNT))

# Tokens by place, for legal_actions: _COL_COL[a][b], _COL_FND[a][slot], ...
_COL_COL: Final = [[f"{a + 1}{b + 1}" for b in range(9)] for a in range(9)]
_COL_FND: Final = [[f"{a + 1}F{k + 1}" for k in range(8)] for a in range(9)]
_FND_COL: Final = [[f"F{k + 1}{b + 1}" for b in range(9)] for k in range(8)]
_WASTE_COL: Final = [f"W{b + 1}" for b in range(9)]
_WASTE_FND: Final = [f"WF{k + 1}" for k in range(8)]
# Card id to value (0..51) as a bytes.translate table; other bytes map to themselves.
_VALUE_BYTES: Final = bytes(c % 52 if c < CARD_COUNT else c for c in range(256))


class Position(NamedTuple):
    """Everything undo restores, as a hashable value of physical card ids.

    Two games with equal positions look the same and score the same from here
    on; the move count and the undo history are not part of it.
    """

    down: tuple[tuple[int, ...], ...]
    up: tuple[tuple[int, ...], ...]
    stock: tuple[int, ...]
    waste: tuple[int, ...]
    foundations: tuple[tuple[int, ...], ...]
    scored: bytes
    score: int


def _as_deal(deal: Deal | str | int) -> Deal:
    if isinstance(deal, Deal):
        return deal
    if isinstance(deal, str):
        return Deal.from_code(deal)
    return Deal(deal)


def _column_key(down: list[int], up: list[int]) -> bytes:
    """A column as `Game.table_hash` reads it: its face-down count (below 52, so
    the translation keeps it), then its face-up cards' values."""
    return bytes([len(down), *up]).translate(_VALUE_BYTES)


def _pool_key(stock: list[int], waste: list[int]) -> bytes:
    """The stock and waste as `Game.table_hash` reads them: the values left, sorted."""
    return bytes(sorted(bytes(stock + waste).translate(_VALUE_BYTES)))


def _foundations_key(foundations: list[list[int]]) -> bytes:
    """The foundations as `Game.table_hash` reads them: each suit's twin piles'
    heights, the lower first."""
    a, b, c, d, e, f, g, h = map(len, foundations)
    return bytes(
        (min(a, b), max(a, b), min(c, d), max(c, d), min(e, f), max(e, f), min(g, h), max(g, h))
    )


def _table_hash(columns: list[bytes], foundations: bytes, pool: bytes) -> int:
    """`Game.table_hash` from each column's `_column_key`, the `_foundations_key` and
    the `_pool_key`."""
    text = b"\xff".join([*sorted(columns), foundations, pool])
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big", signed=True)


class Game:
    """A game of one deal: play actions, undo them, read the table.

    >>> game = Game(Deal(1))
    >>> game.play("S"); game.play("w9")
    >>> game.score, game.moves, game.log
    (5, 2, ['S', 'W9'])
    >>> game.undo(); game.score, game.moves, game.table()["waste_top"]
    (0, 2, 'TH')
    """

    __slots__ = (
        "_deal",
        "_down",
        "_up",
        "_stock",
        "_waste",
        "_foundations",
        "_scored",
        "_score",
        "_moves",
        "_on_foundations",
        "_history",
        "_log",
    )

    _deal: Deal
    _down: list[list[int]]
    _up: list[list[int]]
    _stock: list[int]
    _waste: list[int]
    _foundations: list[list[int]]
    _scored: bytearray
    _score: int
    _moves: int
    _on_foundations: int
    _history: deque[Record]
    _log: list[Compiled]

    def __init__(self, deal: Deal | str | int) -> None:
        """A new game at the start of `deal` (a Deal, a deal code or a deal number)."""
        self._deal = _as_deal(deal)
        columns = self._deal.columns
        self._down = [list(column[:-1]) for column in columns]
        self._up = [[column[-1]] for column in columns]
        # Kept top-last, so that a tap is one pop().
        self._stock = list(reversed(self._deal.stock))
        self._waste = []
        self._foundations = [[] for _ in range(8)]
        self._scored = bytearray(CARD_COUNT)
        self._score = 0
        self._moves = 0
        self._on_foundations = 0
        self._history = deque(maxlen=UNDO_LIMIT)
        self._log = []

    # ------------------------------------------------------------ reading

    @property
    def deal(self) -> Deal:
        """The deal being played."""
        return self._deal

    @property
    def score(self) -> int:
        """The score now (undo takes back what the undone action earned)."""
        return self._score

    @property
    def moves(self) -> int:
        """Accepted actions other than undo; undo never changes it."""
        return self._moves

    @property
    def is_won(self) -> bool:
        """True once all 104 cards are on the foundations; nothing is accepted after."""
        return self._on_foundations == CARD_COUNT

    @property
    def on_foundations(self) -> int:
        """How many cards are on the foundations now (104 when the game is won)."""
        return self._on_foundations

    @property
    def log(self) -> list[str]:
        """The accepted actions so far, canonical tokens, undos included."""
        return [action[3] for action in self._log]

    @property
    def undo_left(self) -> int:
        """How many actions undo can still take back (at most 100)."""
        return len(self._history)

    def position(self) -> Position:
        """The table, the fair-play marks and the score as one hashable value."""
        return Position(
            down=tuple(tuple(column) for column in self._down),
            up=tuple(tuple(column) for column in self._up),
            stock=tuple(self._stock),
            waste=tuple(self._waste),
            foundations=tuple(tuple(pile) for pile in self._foundations),
            scored=bytes(self._scored),
            score=self._score,
        )

    def table_hash(self) -> int:
        """A 64-bit hash (signed, as databases store it) of what the table shows.

        Tables a player could not tell apart in play hash alike: cards by value
        (not which deck they came from), the columns as a set (a king may go to
        any empty one), each suit's twin foundations as a pair of heights, and
        the stock and waste as the cards left in them (taps bring any of them
        up; how far the stock is turned is no choice of play). Score, moves and
        the undo history are not part of it. Stable across processes and
        versions of Python (BLAKE2b, not `hash`), so it can be stored.

        >>> game = Game(Deal(1))
        >>> start = game.table_hash()
        >>> game.play("S"); game.table_hash() == start
        True
        >>> game.play("W9"); game.table_hash() == start
        False
        """
        columns = [_column_key(down, up) for down, up in zip(self._down, self._up, strict=True)]
        pool = _pool_key(self._stock, self._waste)
        return _table_hash(columns, _foundations_key(self._foundations), pool)

    def table(self) -> dict[str, Any]:
        """The position as a plain JSON-ready dict (face-down cards only counted)."""
        waste = self._waste
        return {
            "deal": self._deal.code,
            "columns": [
                {"down": len(down), "up": [card_text(c) for c in up]}
                for down, up in zip(self._down, self._up, strict=True)
            ],
            "stock": len(self._stock),
            "waste": len(waste),
            "waste_top": card_text(waste[-1]) if waste else None,
            "foundations": [
                {
                    "suit": FOUNDATION_SUITS[slot],
                    "count": len(pile),
                    "top": card_text(pile[-1]) if pile else None,
                }
                for slot, pile in enumerate(self._foundations)
            ],
            "score": self._score,
            "moves": self._moves,
            "won": self.is_won,
            "undo_left": len(self._history),
        }

    def legal_actions(self) -> Iterator[str]:
        """Every action `play` accepts now, as canonical tokens.

        Foundations are always named (``3F2``); the shorthand ``3F`` is accepted
        too and means the first of them. ``U`` comes last when undo is possible.
        """
        if self.is_won:
            return
        up = self._up
        waste = self._waste
        foundations = self._foundations
        tops = [column[-1] if column else -1 for column in up]
        if self._stock or waste:
            yield "S"
        if waste:
            card = waste[-1]
            for b in self._columns_taking(card, tops):
                yield _WASTE_COL[b]
            for slot in self._foundations_taking(card):
                yield _WASTE_FND[slot]
        for a, source in enumerate(up):
            if not source:
                continue
            card = source[-1]
            king_run = _RANK[source[0]] == KING
            for b, top in enumerate(tops):
                if b != a and (_NEED[card] == _KEY[top] if top >= 0 else king_run):
                    yield _COL_COL[a][b]
        for a, source in enumerate(up):
            if source:
                for slot in self._foundations_taking(source[-1]):
                    yield _COL_FND[a][slot]
        for slot, pile in enumerate(foundations):
            if pile:
                for b in self._columns_taking(pile[-1], tops):
                    yield _FND_COL[slot][b]
        if self._history:
            yield "U"

    @staticmethod
    def _columns_taking(card: int, tops: list[int]) -> list[int]:
        """Columns (by their top card, -1 when empty) that a single `card` may go on."""
        if _RANK[card] == KING:
            return [b for b, top in enumerate(tops) if top < 0]
        need = _NEED[card]
        return [b for b, top in enumerate(tops) if top >= 0 and _KEY[top] == need]

    def _foundations_taking(self, card: int) -> list[int]:
        slot = _SLOT[card]
        lower = _RANK[card] - 1
        return [k for k in (slot, slot + 1) if len(self._foundations[k]) == lower]

    def is_legal(self, token: str | Action) -> bool:
        """True when `play(token)` would be accepted (False for unreadable text)."""
        action = _compiled_or_none(token)
        return action is not None and self._check(action) is None

    # ------------------------------------------------------------ playing

    def play(self, token: str | Action) -> None:
        """Play one action (a token in any case, or an `Action`).

        Raises `InvalidActionError` for unreadable text and `IllegalActionError`
        for an action the rules refuse; either way the game is unchanged. The
        error's `index` is the position the action would have had in the log.
        """
        action = _compiled_or_none(token)
        index = len(self._log) + 1
        if action is None:
            raise InvalidActionError(str(token).strip(), index)
        if not self._run([action]):
            raise self._refusal(action, str(token).strip(), index)

    def undo(self) -> None:
        """Take back the most recent action not taken back yet (the token ``U``)."""
        self.play("U")

    def play_log(self, log: str | Iterable[str]) -> None:
        """Play a whole log (text, or a list of tokens) from the current position.

        Stops at the first refused action: the actions before it stay played. As
        with `play`, the error's `index` is the action's 1-based position in the
        game's log (for a new game, its position in `log`).
        """
        base = len(self._log) + 1
        if not isinstance(log, str):
            log = list(log)
        actions = compile_log(log)
        readable = len(actions)
        if None in actions:
            readable = actions.index(None)
            runnable: list[Compiled] = actions[:readable]  # type: ignore[assignment]
        else:
            runnable = actions  # type: ignore[assignment]
        done = self._run(runnable)
        if done < readable:
            raise self._refusal(runnable[done], written_token(log, done), base + done)
        if readable < len(actions):
            raise InvalidActionError(written_token(log, readable), base + readable)

    def copy(self) -> Game:
        """An independent game in the same state, history and log included."""
        other = Game.__new__(Game)
        other._deal = self._deal
        other._down = [column[:] for column in self._down]
        other._up = [column[:] for column in self._up]
        other._stock = self._stock[:]
        other._waste = self._waste[:]
        other._foundations = [pile[:] for pile in self._foundations]
        other._scored = self._scored[:]
        other._score = self._score
        other._moves = self._moves
        other._on_foundations = self._on_foundations
        other._history = self._history.copy()
        other._log = self._log[:]
        return other

    def __repr__(self) -> str:
        return f"replay({self._deal!r}, {' '.join(self.log)!r})"

    # ------------------------------------------------------------ the hot path

    def _run(self, actions: list[Compiled]) -> int:
        """Apply `actions` in order until one is refused; return how many were accepted.

        The refused action (if any) changes nothing. Everything is kept in local
        variables and checked inline: this loop is what `replay` spends its time in.
        """
        if self._on_foundations == CARD_COUNT:
            return 0
        up = self._up
        down = self._down
        stock = self._stock
        waste = self._waste
        foundations = self._foundations
        scored = self._scored
        history = self._history
        remember = history.append
        score = self._score
        moves = self._moves
        on_foundations = self._on_foundations
        need = _NEED
        key = _KEY
        rank = _RANK
        slot_of = _SLOT
        done = len(actions)

        for i, (kind, a, b, _token, records) in enumerate(actions):
            if kind == COL_COL:
                source = up[a]
                if not source:
                    done = i
                    break
                target = up[b]
                if target:
                    if need[source[-1]] != key[target[-1]]:
                        done = i
                        break
                    target.append(source.pop())
                    if source or not down[a]:
                        remember(records[0])
                    else:
                        source.append(down[a].pop())
                        score += 5
                        remember(records[1])
                elif rank[source[0]] == KING:
                    # The whole king-headed run: swap the two lists (the target is empty).
                    up[a] = target
                    up[b] = source
                    if down[a]:
                        target.append(down[a].pop())
                        score += 5
                        remember(records[3])
                    else:
                        remember(records[2])
                else:
                    done = i
                    break
                moves += 1

            elif kind == STOCK:
                if stock:
                    waste.append(stock.pop())
                    remember(records[0])
                elif waste:
                    # Same order again: the first card turned up last pass comes up first.
                    waste.reverse()
                    stock.extend(waste)
                    waste.clear()
                    remember(records[1])
                else:
                    done = i
                    break
                moves += 1

            elif kind == COL_FND or kind == WASTE_FND:  # noqa: SIM109 (no tuple per action)
                source = up[a] if kind == COL_FND else waste
                if not source:
                    done = i
                    break
                card = source[-1]
                if b == ANY_FOUNDATION:
                    slot = slot_of[card]
                    pile = foundations[slot]
                    if len(pile) != rank[card] - 1:
                        slot += 1
                        pile = foundations[slot]
                        if len(pile) != rank[card] - 1:
                            done = i
                            break
                else:
                    slot = b
                    pile = foundations[slot]
                    if slot >> 1 != slot_of[card] >> 1 or len(pile) != rank[card] - 1:
                        done = i
                        break
                pile.append(source.pop())
                on_foundations += 1
                moves += 1
                # Fair play: a physical card earns its +10 only the first time.
                first = 0 if scored[card] else 1
                if first:
                    scored[card] = 1
                    score += 10
                if kind == WASTE_FND:
                    remember(records[2 * slot + first])
                elif source or not down[a]:
                    remember(records[4 * slot + 2 * first])
                else:
                    source.append(down[a].pop())
                    score += 5
                    remember(records[4 * slot + 2 * first + 1])
                if on_foundations == CARD_COUNT:
                    # Won: nothing after this action is accepted.
                    done = i + 1
                    break

            elif kind == UNDO:
                if not history:
                    done = i
                    break
                undo_kind, a, b, points, turned, first = history.pop()
                score -= points
                if turned:
                    down[a].append(up[a].pop())
                if undo_kind == COL_COL:
                    up[a].append(up[b].pop())
                elif undo_kind == STOCK:
                    stock.append(waste.pop())
                elif undo_kind == COL_FND or undo_kind == WASTE_FND:  # noqa: SIM109
                    card = foundations[b].pop()
                    on_foundations -= 1
                    if first:
                        scored[card] = 0
                    (up[a] if undo_kind == COL_FND else waste).append(card)
                elif undo_kind == WASTE_COL:
                    waste.append(up[b].pop())
                elif undo_kind == KING_RUN:
                    up[a], up[b] = up[b], up[a]
                elif undo_kind == RECYCLE:
                    stock.reverse()
                    waste.extend(stock)
                    stock.clear()
                else:  # FND_COL
                    foundations[a].append(up[b].pop())
                    on_foundations += 1

            elif kind == WASTE_COL or kind == FND_COL:  # noqa: SIM109
                # Apart from COL_COL on purpose: that branch is the hottest, and an
                # empty target means a block move there, a single king here.
                source = waste if kind == WASTE_COL else foundations[a]
                if not source:
                    done = i
                    break
                target = up[b]
                if target:
                    if need[source[-1]] != key[target[-1]]:
                        done = i
                        break
                elif rank[source[-1]] != KING:
                    done = i
                    break
                target.append(source.pop())
                if kind == WASTE_COL:
                    score += 5
                else:
                    on_foundations -= 1
                moves += 1
                remember(records[0])

            else:  # FND_FND, TO_WASTE, SAME_COL: never legal
                done = i
                break

        self._score = score
        self._moves = moves
        self._on_foundations = on_foundations
        self._log.extend(actions if done == len(actions) else actions[:done])
        return done

    # ------------------------------------------------------------ refusals

    def _refusal(self, action: Compiled, written: str, index: int) -> IllegalActionError:
        refusal = self._check(action)
        if refusal is None:  # pragma: no cover - the two rule statements disagree
            raise AssertionError(f"{action[3]} was refused but is legal")
        code, params = refusal
        return IllegalActionError(code, written, index, params)

    def _check(self, action: Compiled) -> tuple[str, dict[str, str]] | None:
        """Why the rules refuse `action` now: (code, template fields), or None if legal.

        This is the rules written out plainly; `_run` must agree with it, which
        the tests check on random positions.
        """
        kind, a, b, _token, _records = action
        if self.is_won:
            return ("game_over", {})
        if kind == UNDO:
            return None if self._history else ("nothing_to_undo", {})
        if kind == STOCK:
            return None if self._stock or self._waste else ("empty_stock_and_waste", {})
        if kind == TO_WASTE:
            return ("waste_is_not_a_destination", {})
        if kind == FND_FND:
            return ("foundation_to_foundation", {})
        if kind == SAME_COL:
            return ("same_column", {})

        if kind in (COL_COL, COL_FND):
            source, place = self._up[a], str(a + 1)
        elif kind in (WASTE_COL, WASTE_FND):
            source, place = self._waste, "W"
        else:
            source, place = self._foundations[a], f"F{a + 1}"
        if not source:
            return ("empty_source", {"source": place})
        card = source[-1]
        text = card_text(card)

        if kind in (COL_FND, WASTE_FND):
            if b == ANY_FOUNDATION:
                if any(self._foundation_accepts(slot, card) for slot in range(8)):
                    return None
                return ("no_foundation_accepts", {"card": text})
            if self._foundation_accepts(b, card):
                return None
            suit = SUIT_NAMES[FOUNDATION_SUITS[b]]
            return ("foundation_refuses", {"foundation": str(b + 1), "card": text, "suit": suit})

        target = self._up[b]
        if not target:
            # A move from a column to an empty column moves the king-headed run.
            mover = source[0] if kind == COL_COL else card
            return None if rank_of(mover) == KING else ("king_only", {})
        top = target[-1]
        if _fits(card, top):
            return None
        if kind == COL_COL:
            if any(_fits(below, top) for below in source[:-1]):
                return ("one_card_at_a_time", {})
            if rank_of(source[0]) == KING and len(source) > 1:
                return ("run_only_to_empty", {"card": card_text(source[0])})
        return ("column_refuses", {"card": text, "target": card_text(top)})

    def _foundation_accepts(self, slot: int, card: int) -> bool:
        pile = self._foundations[slot]
        return FOUNDATION_SUITS[slot] == SUITS[card % 52 // 13] and len(pile) == rank_of(card) - 1


def _fits(card: int, top: int) -> bool:
    """True when `card` may go on a column whose top card is `top`."""
    return rank_of(top) == rank_of(card) + 1 and is_red(top) != is_red(card)


def _compiled_or_none(token: str | Action) -> Compiled | None:
    if isinstance(token, Action):
        return TOKENS[token.token]
    return compile_or_none(token)


def replay(deal: Deal | str | int, log: str | Iterable[str]) -> Game:
    """Play a whole log from the start of `deal` and return the game.

    A refused action raises `IllegalActionError` (unreadable text
    `InvalidActionError`) with its 1-based `index`, `token`, `reason` and `code`.

    >>> game = replay("EH1-N-AAAAAAB", "s w9 s")
    >>> game.score, game.moves
    (5, 3)
    """
    game = Game(deal)
    game.play_log(log)
    return game


def foundations_course(
    deal: Deal | str | int, log: str | Iterable[str], parts: int = 4
) -> list[int]:
    """How many cards were on the foundations after each of `parts` equal parts of a
    game's log (by actions, undos included): its course, in `parts` numbers only.

    A few counts of 0 to 104, so a share can draw how a game went without any
    card or action of it. A refused log raises as `replay` does.

    >>> foundations_course("EH1-N-AAAAAAC", "2F 2F S S")
    [1, 2, 2, 2]
    >>> foundations_course("EH1-N-AAAAAAC", "")
    [0, 0, 0, 0]
    """
    if parts < 1:
        raise ValueError(f"parts must be 1 or more, not {parts}")
    tokens = log.split() if isinstance(log, str) else list(log)
    game = Game(deal)
    course = []
    done = 0
    for part in range(1, parts + 1):
        # The end of each part, rounded up, so the last part ends with the log.
        end = -(-len(tokens) * part // parts)
        game.play_log(tokens[done:end])
        done = end
        course.append(game.on_foundations)
    return course


def table_hashes(deal: Deal | str | int, log: str | Iterable[str]) -> list[int]:
    """The `Game.table_hash` of a game's start, then of its table after each action
    but stock taps and undos, in order.

    So every table the game passes through is in it, faster than hashing after
    each `play`: a stock tap never changes the hash and an undo goes back to a
    table passed before; and only the columns an action touched are read
    again (for an undo, those of the action it takes back). A refused log
    raises as `replay` does.

    >>> hashes = table_hashes("EH1-N-AAAAAAB", "S W9 U S S")
    >>> len(hashes), hashes[0] == hashes[1]
    (2, False)
    """
    return replay_hashed(deal, log)[1]


def replay_hashed(deal: Deal | str | int, log: str | Iterable[str]) -> tuple[Game, list[int]]:
    """`replay` and `table_hashes` in one pass over the log: the game, and the
    hashes of the tables it passed through (for a server that checks a log and
    compares its play with others', one replay instead of two).

    >>> game, hashes = replay_hashed("EH1-N-AAAAAAB", "S W9 U S S")
    >>> game.score, game.moves, hashes == table_hashes("EH1-N-AAAAAAB", "S W9 U S S")
    (0, 4, True)
    """
    game = Game(deal)
    down, up = game._down, game._up
    columns = [_column_key(down[i], up[i]) for i in range(len(up))]
    pool = _pool_key(game._stock, game._waste)
    foundations = _foundations_key(game._foundations)
    hashes = [_table_hash(columns, foundations, pool)]
    if not isinstance(log, str):
        log = list(log)
    # What changed since the last hash: columns, and whether the stock and waste
    # and the foundations did.
    changed: set[int] = set()
    pool_changed = foundations_changed = False
    taps: list[Compiled] = []  # stock taps not played yet: played with the next action

    def play(batch: list[Compiled], last: int) -> None:
        # One call of the hot path per batch; `last` is the index of its last action.
        done = game._run(batch)
        if done < len(batch):
            at = last - len(batch) + 1 + done
            raise game._refusal(batch[done], written_token(log, at), at + 1)

    actions = compile_log(log)
    for index, action in enumerate(actions):
        if action is None:
            play(taps, index - 1)
            raise InvalidActionError(written_token(log, index), index + 1)
        kind = action[0]
        if kind == STOCK:
            taps.append(action)
            continue
        if kind == UNDO and taps:
            # It takes back the last tap, whose record must be on top first.
            play(taps, index - 1)
            taps = []
        # An undo changes what the action it takes back changed.
        undone = game._history[-1] if kind == UNDO and game._history else None
        taps.append(action)
        play(taps, index)
        taps = []
        touched, a, b = (
            (undone[0], undone[1], undone[2]) if undone else (kind, action[1], action[2])
        )
        if touched in (COL_COL, KING_RUN):
            changed.update((a, b))
        elif touched == COL_FND:
            changed.add(a)
            foundations_changed = True
        elif touched == WASTE_FND:
            pool_changed = foundations_changed = True
        elif touched == WASTE_COL:
            changed.add(b)
            pool_changed = True
        elif touched == FND_COL:
            changed.add(b)
            foundations_changed = True
        if kind == UNDO:
            # It goes back to a table hashed already.
            continue
        for i in changed:
            columns[i] = _column_key(down[i], up[i])
        changed.clear()
        if pool_changed:
            pool = _pool_key(game._stock, game._waste)
            pool_changed = False
        if foundations_changed:
            foundations = _foundations_key(game._foundations)
            foundations_changed = False
        hashes.append(_table_hash(columns, foundations, pool))
    play(taps, len(actions) - 1)
    return game, hashes
