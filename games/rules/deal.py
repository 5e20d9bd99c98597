"""Deals (algorithm EH1): SplitMix64, Fisher–Yates, the row-by-row deal, deal codes."""

from __future__ import annotations

from functools import lru_cache
from typing import Final

from .cards import CARD_COUNT, Card
from .errors import InvalidDealError

__all__ = ["Deal", "DEAL_MAX", "CODE_PREFIX", "splitmix64"]

DEAL_MAX: Final = 999_999
CODE_PREFIX: Final = "EH1-N-"
CODE_LETTERS: Final = 7
COLUMN_COUNT: Final = 9
DEALT: Final = 45  # 1 + 2 + ... + 9 cards on the columns; the rest is the stock

_MASK: Final = (1 << 64) - 1


def splitmix64(seed: int, count: int) -> list[int]:
    """The first `count` outputs of SplitMix64 seeded with `seed` (RULES.md, EH1 step 2)."""
    state = seed & _MASK
    out = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & _MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        out.append(z ^ (z >> 31))
    return out


def _check_number(number: object) -> int:
    if type(number) is not int or not 1 <= number <= DEAL_MAX:
        raise InvalidDealError("deal_number_range", last=f"{DEAL_MAX:,}", number=repr(number))
    return number


@lru_cache(maxsize=256)
def _shuffled(number: int) -> tuple[int, ...]:
    # Cached: a day's deal is replayed for every submission.
    deck = list(range(CARD_COUNT))
    randoms = splitmix64(number, CARD_COUNT - 1)
    for step, i in enumerate(range(CARD_COUNT - 1, 0, -1)):
        j = randoms[step] % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


@lru_cache(maxsize=256)
def _dealt(number: int) -> tuple[tuple[int, ...], ...]:
    # EH1 step 4: row by row, column `row` to 9; position k is the k-th card dealt.
    ids = _shuffled(number)
    columns: list[list[int]] = [[] for _ in range(COLUMN_COUNT)]
    position = 0
    for row in range(COLUMN_COUNT):
        for col in range(row, COLUMN_COUNT):
            columns[col].append(ids[position])
            position += 1
    return tuple(tuple(column) for column in columns)


def _encode(number: int) -> str:
    letters = []
    for _ in range(CODE_LETTERS):
        number, digit = divmod(number, 26)
        letters.append(chr(ord("A") + digit))
    return CODE_PREFIX + "".join(reversed(letters))


def _decode(text: str) -> int:
    strange = [ch for ch in text.strip() if not ch.isascii()]
    if strange:
        # Before upper(): it would turn e.g. "ı" into "I".
        raise InvalidDealError("deal_code_letter", character=repr(strange[0]), text=repr(text))
    cleaned = text.strip().upper()
    parts = cleaned.split("-")
    if len(parts) != 3 or parts[0] != "EH1":
        raise InvalidDealError("deal_code_prefix", prefix=CODE_PREFIX, text=repr(text))
    if parts[1] != "N":
        raise InvalidDealError("deal_code_variant", variant=repr(parts[1]), text=repr(text))
    letters = parts[2]
    if len(letters) != CODE_LETTERS:
        raise InvalidDealError(
            "deal_code_length",
            letters=str(CODE_LETTERS),
            prefix=CODE_PREFIX,
            text=repr(text),
            count=str(len(letters)),
        )
    bad = [ch for ch in letters if not "A" <= ch <= "Z"]
    if bad:
        raise InvalidDealError("deal_code_letter", character=repr(bad[0]), text=repr(text))
    number = 0
    for ch in letters:
        number = number * 26 + ord(ch) - ord("A")
    if not 1 <= number <= DEAL_MAX:
        raise InvalidDealError(
            "deal_code_range", deal=cleaned, number=f"{number:,}", last=f"{DEAL_MAX:,}"
        )
    return number


class Deal:
    """One of the 999,999 EH1 deals: an immutable value named by its number.

    >>> deal = Deal.from_code(" eh1-n-aaaaaab ")
    >>> deal
    Deal(1)
    >>> deal.code, [str(card) for card in deal.cards[:3]]
    ('EH1-N-AAAAAAB', ['6D', '7D', 'JS'])
    """

    __slots__ = ("_number", "_ids")

    def __init__(self, number: int) -> None:
        self._number = _check_number(number)
        self._ids = _shuffled(number)

    @classmethod
    def from_code(cls, text: str) -> Deal:
        """Read a deal code such as ``EH1-N-AAAAAAF`` (case and surrounding blanks ignored).

        Raises InvalidDealError (a ValueError) saying what is wrong: the prefix or
        variant, the letter count, a character outside A–Z, or a number outside
        1..999,999.
        """
        if not isinstance(text, str):
            raise InvalidDealError("deal_code_not_text", text=repr(text))
        return cls(_decode(text))

    @property
    def number(self) -> int:
        """The deal number, 1..999,999."""
        return self._number

    @property
    def code(self) -> str:
        """The canonical deal code, e.g. ``EH1-N-AAAAAAB``."""
        return _encode(self._number)

    @property
    def card_ids(self) -> tuple[int, ...]:
        """The 104 physical card ids in shuffled order (position 0 first)."""
        return self._ids

    @property
    def cards(self) -> tuple[Card, ...]:
        """The 104 cards in shuffled order."""
        return tuple(Card.from_id(i) for i in self._ids)

    @property
    def columns(self) -> tuple[tuple[int, ...], ...]:
        """Card ids of the 9 dealt columns, bottom to top; only the top card is face up."""
        return _dealt(self._number)

    @property
    def stock(self) -> tuple[int, ...]:
        """Card ids of the stock in the order taps turn them up (positions 45..103)."""
        return self._ids[DEALT:]

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return f"Deal({self._number})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Deal):
            return NotImplemented
        return self._number == other._number

    def __hash__(self) -> int:
        return hash(("Deal", self._number))
