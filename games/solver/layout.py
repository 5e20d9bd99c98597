"""The solver's view of a table: cards as small ints, every card known.

The solver sees what the player cannot (the face-down cards), because it
works from the deal itself. Cards are encoded as ``suit * 13 + rank - 1``
with suits in the rules' order ``S H D C``: the two physical copies of a card
share one value, since they are interchangeable for winning (only the score's
fair-play marks tell them apart, and the solver does not score).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

RANKS = "A23456789TJQK"
SUITS = "SHDC"
COLUMNS = 9
FOUNDATIONS = 8
CARDS = 104


def card_value(text: str) -> int:
    """The solver's value of a card written as in the rules, e.g. ``"TH"`` -> 22.

    >>> card_value("AS"), card_value("TH"), card_value("kc")
    (0, 22, 51)
    """
    text = text.strip().upper()
    if len(text) != 2 or text[0] not in RANKS or text[1] not in SUITS:
        raise ValueError(f"not a card: {text!r}")
    return SUITS.index(text[1]) * 13 + RANKS.index(text[0])


def card_text(value: int) -> str:
    """The text form of a card value: ``card_text(22) == "TH"``."""
    return RANKS[value % 13] + SUITS[value // 13]


@dataclass(frozen=True, slots=True)
class Layout:
    """A complete table, face-down cards included.

    - ``columns``: 9 columns, bottom to top, each a tuple of card values;
    - ``down``: how many cards at the bottom of each column are face down;
    - ``pool``: the cards of the waste and the stock in the order they cycle:
      the waste from bottom to top, then the stock from the next card a tap
      turns up to the last (taps and recycles never change this order);
    - ``waste``: how many of the first ``pool`` cards are in the waste;
    - ``foundations``: the height (0..13) of F1..F8 (suits S S H H D D C C).
    """

    columns: tuple[tuple[int, ...], ...]
    down: tuple[int, ...]
    pool: tuple[int, ...]
    waste: int
    foundations: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.columns) != COLUMNS or len(self.down) != COLUMNS:
            raise ValueError("a position has 9 columns")
        if len(self.foundations) != FOUNDATIONS:
            raise ValueError("a position has 8 foundations")
        if not 0 <= self.waste <= len(self.pool):
            raise ValueError("the waste holds more cards than the pool")
        counts = [0] * 52
        for column, down in zip(self.columns, self.down, strict=True):
            if not 0 <= down <= max(len(column) - 1, 0):
                raise ValueError("a column's top card is always face up")
            for value in column:
                counts[value] += 1
        for value in self.pool:
            counts[value] += 1
        for slot, height in enumerate(self.foundations):
            if not 0 <= height <= 13:
                raise ValueError("a foundation holds 0 to 13 cards")
            for rank in range(height):
                counts[(slot // 2) * 13 + rank] += 1
        if any(count != 2 for count in counts):
            raise ValueError("a position holds every card exactly twice")

    @classmethod
    def from_layout(
        cls,
        columns: Sequence[Sequence[str]],
        stock: Iterable[str],
    ) -> Layout:
        """The starting position of a deal from its dealt columns and stock.

        ``columns`` are bottom to top with every card face down except the
        last; ``stock`` is in the order taps turn it up.
        """
        values = tuple(tuple(card_value(card) for card in column) for column in columns)
        return cls(
            columns=values,
            down=tuple(max(len(column) - 1, 0) for column in values),
            pool=tuple(card_value(card) for card in stock),
            waste=0,
            foundations=(0,) * FOUNDATIONS,
        )

    @property
    def is_won(self) -> bool:
        """Whether every card is on the foundations."""
        return sum(self.foundations) == CARDS
