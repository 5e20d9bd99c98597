"""Cards: the 104 physical card ids and the `Card` value.

The engine works on ints (the physical card id 0..103 of RULES.md: copy*52 +
suit_index*13 + rank-1) and looks facts up in the tuples below, so that the
hot path never builds an object. `Card` is the readable value for everyone
else: a rank and a suit, with one text form ("TH") that round-trips.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CARD_COUNT",
    "RANKS",
    "SUITS",
    "Card",
    "card_text",
    "rank_of",
    "suit_of",
    "is_red",
]

CARD_COUNT: Final = 104
RANKS: Final = "A23456789TJQK"
#: Suit letters in card-id order (S H D C); also the foundation order F1..F8 by pairs.
SUITS: Final = "SHDC"
SUIT_NAMES: Final = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
KING: Final = 13


def rank_of(card_id: int) -> int:
    """Rank 1 (ace) .. 13 (king) of a physical card id."""
    return card_id % 13 + 1


def suit_of(card_id: int) -> str:
    """Suit letter of a physical card id."""
    return SUITS[card_id % 52 // 13]


def is_red(card_id: int) -> bool:
    """True for hearts and diamonds."""
    return suit_of(card_id) in "HD"


def card_text(card_id: int) -> str:
    """Text form of a physical card id, e.g. ``card_text(9) == "TS"``."""
    return RANKS[card_id % 13] + suit_of(card_id)


class Card:
    """A card face: a rank and a suit (the two physical copies read the same).

    >>> Card.parse("th")
    Card.parse('TH')
    >>> str(Card.parse("TH")), Card.parse("TH").rank, Card.parse("TH").is_red
    ('TH', 10, True)
    """

    __slots__ = ("_rank", "_suit")

    def __init__(self, rank: int, suit: str) -> None:
        if type(rank) is not int or not 1 <= rank <= KING:
            raise ValueError(f"a card's rank is 1 (ace) to 13 (king), not {rank!r}")
        if suit not in SUITS or len(suit) != 1:
            raise ValueError(f"a card's suit is one of S H D C, not {suit!r}")
        self._rank = rank
        self._suit = suit

    @classmethod
    def parse(cls, text: str) -> Card:
        """Read a card written rank then suit ("TH", "ks"); blanks and case ignored."""
        cleaned = text.strip().upper() if isinstance(text, str) and text.isascii() else ""
        if len(cleaned) != 2 or cleaned[0] not in RANKS or cleaned[1] not in SUITS:
            raise ValueError(f"not a card: {text!r} (write rank then suit, e.g. TH or KS)")
        return cls(RANKS.index(cleaned[0]) + 1, cleaned[1])

    @classmethod
    def from_id(cls, card_id: int) -> Card:
        """The face of a physical card id 0..103."""
        if type(card_id) is not int or not 0 <= card_id < CARD_COUNT:
            raise ValueError(f"a card id is 0..103, not {card_id!r}")
        return cls(rank_of(card_id), suit_of(card_id))

    @property
    def rank(self) -> int:
        """1 (ace) .. 13 (king)."""
        return self._rank

    @property
    def suit(self) -> str:
        """One of "S", "H", "D", "C"."""
        return self._suit

    @property
    def is_red(self) -> bool:
        """True for hearts and diamonds."""
        return self._suit in "HD"

    def ids(self) -> tuple[int, int]:
        """The two physical card ids with this face (copy 0, copy 1)."""
        base = SUITS.index(self._suit) * 13 + self._rank - 1
        return (base, base + 52)

    def __str__(self) -> str:
        return RANKS[self._rank - 1] + self._suit

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self._rank == other._rank and self._suit == other._suit

    def __hash__(self) -> int:
        return hash((self._rank, self._suit))
