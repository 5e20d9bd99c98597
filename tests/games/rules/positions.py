"""Arranged positions for rule tests: a table written as text, like the vectors.

Cards are written rank then suit; lower case means face down. The two physical
copies of a face are handed out in order (the first "7H" is copy 0, the second
copy 1). Only the cards written are on the table, which is all a rule needs.
"""

from __future__ import annotations

from collections import deque

from games.rules import Card, Game


def arrange(
    columns: list[str] | None = None,
    stock: str = "",
    waste: str = "",
    foundations: list[str] | None = None,
) -> Game:
    """A game (of deal 1) whose table is exactly what is written.

    `columns` lists up to 9 columns bottom to top, `stock` the cards in the
    order taps turn them up, `waste` bottom to top, `foundations` F1..F8 from
    the ace up.
    """
    used: dict[Card, int] = {}

    def card_id(text: str) -> int:
        card = Card.parse(text)
        copy = used.get(card, 0)
        if copy > 1:
            raise ValueError(f"{text} is written three times")
        used[card] = copy + 1
        return card.ids()[copy]

    game = Game(1)
    columns = (columns or []) + [""] * (9 - len(columns or []))
    game._down = [[card_id(t) for t in col.split() if t.islower()] for col in columns]
    game._up = [[card_id(t) for t in col.split() if not t.islower()] for col in columns]
    for text in columns:
        tokens = text.split()
        assert tokens == sorted(tokens, key=str.isupper), f"face-down cards go below: {text}"
    game._stock = [card_id(t) for t in stock.split()][::-1]
    game._waste = [card_id(t) for t in waste.split()]
    piles = (foundations or []) + [""] * (8 - len(foundations or []))
    game._foundations = [[card_id(t) for t in pile.split()] for pile in piles]
    game._on_foundations = sum(len(pile) for pile in game._foundations)
    # Cards arranged on the foundations count as already scored.
    for pile in game._foundations:
        for c in pile:
            game._scored[c] = 1
    game._history = deque(maxlen=100)
    return game


def columns_of(game: Game) -> list[str]:
    """The columns as text, lower case face down (the inverse of `arrange`)."""
    table = game.table()
    out = []
    for number, column in enumerate(table["columns"]):
        down = [str(Card.from_id(c)).lower() for c in game._down[number]]
        out.append(" ".join(down + column["up"]))
    return out
