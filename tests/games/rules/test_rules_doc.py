"""docs/RULES.md: every worked example replays as the page says, and every refusal is named.

The examples are the page's fenced blocks marked `example` (appendix A of the
page describes their fields); each one is replayed with the rules engine and
compared field by field.
"""

from __future__ import annotations

import re

import pytest

from games.rules import REASONS, ActionError, Deal, Game
from tests.paths import ROOT

PAGE = ROOT / "docs" / "RULES.md"
TEXT = PAGE.read_text(encoding="utf-8")

FIELDS = {
    "deal",
    "log",
    "shuffle",
    "tops",
    "waste",
    "foundations",
    "score",
    "moves",
    "won",
    "refused",
    "message",
}
REFUSED = re.compile(r'action (\d+) "([^"]*)" ([a-z_]+)')


def _examples() -> list[dict[str, str]]:
    """The `example` blocks of the page, each as its fields."""
    examples = []
    for body in re.findall(r"^```example\n(.*?)^```$", TEXT, flags=re.MULTILINE | re.DOTALL):
        fields: dict[str, str] = {}
        name = None
        for line in body.splitlines():
            if line[:1].isspace():
                assert name is not None, f"a continuation line with no field above it: {line!r}"
                fields[name] = f"{fields[name]} {line.strip()}".strip()
                continue
            name, colon, value = line.partition(":")
            assert colon and name in FIELDS, f"not a field of appendix A: {line!r}"
            assert name not in fields, f"field {name!r} given twice in one example"
            fields[name] = value.strip()
        examples.append(fields)
    return examples


EXAMPLES = _examples()


def _example_id(fields: dict[str, str]) -> str:
    log = fields.get("log", "")
    return f"{fields.get('deal')} {log[:24]}{'...' if len(log) > 24 else ''}"


def test_the_page_has_examples_that_each_say_what_to_expect() -> None:
    assert len(EXAMPLES) >= 25
    for fields in EXAMPLES:
        assert {"deal", "log"} <= fields.keys(), fields
        assert fields.keys() & {"refused", "score", "moves", "won", "tops"}, fields


@pytest.mark.parametrize("fields", EXAMPLES, ids=[_example_id(f) for f in EXAMPLES])
def test_each_example_replays_as_the_page_says(fields: dict[str, str]) -> None:
    deal = Deal.from_code(fields["deal"])
    game = Game(deal)
    refusal: ActionError | None = None
    try:
        game.play_log(fields["log"])
    except ActionError as error:
        refusal = error

    if "refused" in fields:
        expected = REFUSED.fullmatch(fields["refused"])
        assert expected is not None, f"unreadable refused field: {fields['refused']!r}"
        assert refusal is not None, "the log was accepted to its end"
        index, token, code = expected.groups()
        assert (refusal.index, refusal.token, refusal.code) == (int(index), token, code)
        if "message" in fields:
            assert refusal.message == fields["message"]
    else:
        assert refusal is None, f"refused: {refusal}"
        assert "message" not in fields

    table = game.table()
    if "shuffle" in fields:
        first = fields["shuffle"].split()
        assert [str(card) for card in deal.cards[: len(first)]] == first
    if "tops" in fields:
        tops = [column["up"][-1] if column["up"] else "--" for column in table["columns"]]
        assert tops == fields["tops"].split()
    if "waste" in fields:
        assert (table["waste_top"] or "--") == fields["waste"]
    if "foundations" in fields:
        foundations = [pile["top"] or "--" for pile in table["foundations"]]
        assert foundations == fields["foundations"].split()
    if "score" in fields:
        assert game.score == int(fields["score"])
    if "moves" in fields:
        assert game.moves == int(fields["moves"])
    if "won" in fields:
        assert fields["won"] in {"yes", "no"}
        assert game.is_won == (fields["won"] == "yes")


def test_every_reason_code_is_named_on_the_page() -> None:
    missing = [code for code in REASONS if f"`{code}`" not in TEXT]
    assert not missing
    assert len(REASONS) == 14


def test_every_reason_code_has_an_example() -> None:
    shown = set()
    for fields in EXAMPLES:
        if "refused" in fields:
            expected = REFUSED.fullmatch(fields["refused"])
            assert expected is not None
            shown.add(expected.group(3))
    assert shown == set(REASONS)


def test_the_deal_numbers_and_codes_of_the_page_match() -> None:
    rows = re.findall(r"^\| ([\d,]+) \| `(EH1-N-[A-Z]{7})` \|", TEXT, flags=re.MULTILINE)
    assert len(rows) >= 5
    for number, code in rows:
        assert Deal(int(number.replace(",", ""))).code == code
        assert Deal.from_code(code).number == int(number.replace(",", ""))


def test_the_codes_the_page_reads_are_read_that_way() -> None:
    rows = re.findall(r"^\| `([^`]+)` \| (deal [\d,]+|refused)", TEXT, flags=re.MULTILINE)
    assert len(rows) >= 8
    for written, outcome in rows:
        if outcome == "refused":
            with pytest.raises(ValueError):
                Deal.from_code(written)
        else:
            assert Deal.from_code(written).number == int(outcome.split()[1].replace(",", ""))


def test_the_page_points_nowhere_outside_the_repository() -> None:
    assert "://" not in TEXT
    assert "shared/" not in TEXT
