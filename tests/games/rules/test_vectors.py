"""The shared conformance vectors: every deal card for card, every log to the same result."""

from __future__ import annotations

import json
from typing import Any

import pytest

from games.rules import ActionError, Card, Deal, replay
from games.rules.cards import card_text
from tests.paths import VECTORS

DEALS: list[dict[str, Any]] = json.loads((VECTORS / "deals.json").read_text())["deals"]
GAMES: list[dict[str, Any]] = [
    json.loads(line) for line in (VECTORS / "games.jsonl").read_text().splitlines() if line.strip()
]


def test_the_vector_files_are_all_there() -> None:
    assert len(DEALS) == 8
    assert len(GAMES) == 301


@pytest.mark.parametrize("vector", DEALS, ids=[str(d["number"]) for d in DEALS])
def test_each_deal_matches_card_for_card(vector: dict[str, Any]) -> None:
    deal = Deal(vector["number"])
    assert deal.code == vector["code"]
    assert Deal.from_code(vector["code"]) == deal
    assert [str(card) for card in deal.cards] == vector["shuffled"]
    assert [Card.parse(text) for text in vector["shuffled"]] == list(deal.cards)
    dealt = [
        [card_text(c).lower() for c in column[:-1]] + [card_text(column[-1])]
        for column in deal.columns
    ]
    assert dealt == vector["columns"]
    assert [card_text(c) for c in deal.stock] == vector["stock_next_first"]


@pytest.mark.parametrize("vector", GAMES, ids=[f"{i + 1}-{g['deal']}" for i, g in enumerate(GAMES)])
def test_each_log_gives_the_same_result(vector: dict[str, Any]) -> None:
    if "refused_at" in vector:
        with pytest.raises(ActionError) as refused:
            replay(vector["deal"], vector["log"])
        assert refused.value.index == vector["refused_at"]
        assert (
            refused.value.token.upper() == vector["log"].split()[vector["refused_at"] - 1].upper()
        )
        # The same log given as a list of tokens is refused at the same action.
        with pytest.raises(ActionError) as as_list:
            replay(vector["deal"], vector["log"].split())
        assert as_list.value.index == vector["refused_at"]
        # Everything before the refused action is accepted.
        tokens = vector["log"].split()[: vector["refused_at"] - 1]
        assert len(replay(vector["deal"], tokens).log) == vector["refused_at"] - 1
    else:
        game = replay(vector["deal"], vector["log"])
        assert (game.score, game.moves, game.is_won) == (
            vector["score"],
            vector["moves"],
            vector["won"],
        )
        assert game.log == [token.upper() for token in vector["log"].split()]
