"""Cards, deals and actions: immutable values with one text form that round-trips."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from games.rules import (
    DEAL_REASONS,
    Action,
    Card,
    Deal,
    InvalidActionError,
    InvalidDealError,
    format_log,
    parse_log,
)
from games.rules.actions import TOKENS
from games.rules.cards import card_text

# ---------------------------------------------------------------- cards


def test_every_card_text_round_trips() -> None:
    for card_id in range(104):
        card = Card.from_id(card_id)
        assert str(card) == card_text(card_id)
        assert Card.parse(str(card)) == card
        assert eval(repr(card)) == card
        assert card_id in card.ids()


def test_card_ids_follow_the_canonical_deck_order() -> None:
    assert Card.parse("AS").ids() == (0, 52)
    assert Card.parse("KS").ids() == (12, 64)
    assert Card.parse("TH").ids() == (22, 74)
    assert Card.parse("AD").ids() == (26, 78)
    assert Card.parse("KC").ids() == (51, 103)


def test_a_card_reads_in_any_case_and_knows_its_colour() -> None:
    assert Card.parse(" th ") == Card(10, "H")
    assert Card.parse("TH").is_red and Card.parse("4d").is_red
    assert not Card.parse("KS").is_red and not Card.parse("2c").is_red


@pytest.mark.parametrize("text", ["", "T", "10H", "1S", "KX", "HT", "ZZ", "THH"])
def test_a_card_that_is_not_one_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a card"):
        Card.parse(text)


def test_a_card_is_hashable_and_immutable() -> None:
    assert len({Card.parse("TH"), Card.parse("th"), Card.from_id(74)}) == 1
    with pytest.raises(AttributeError):
        Card.parse("TH").rank = 3  # type: ignore[misc]


# ---------------------------------------------------------------- deals


def test_deal_one_matches_the_check_values_of_the_rules() -> None:
    deal = Deal(1)
    assert [str(c) for c in deal.cards[:3]] == ["6D", "7D", "JS"]
    assert [card_text(column[-1]) for column in deal.columns] == (
        ["6D", "9S", "4H", "5C", "8H", "7H", "6H", "3D", "JC"]
    )
    assert [len(column) for column in deal.columns] == list(range(1, 10))
    assert len(deal.stock) == 59


@pytest.mark.parametrize(
    ("number", "code"),
    [(1, "EH1-N-AAAAAAB"), (5, "EH1-N-AAAAAAF"), (26, "EH1-N-AAAAABA"), (999_999, "EH1-N-AACEXHN")],
)
def test_deal_codes(number: int, code: str) -> None:
    assert Deal(number).code == code == str(Deal(number))
    assert Deal.from_code(code).number == number
    assert Deal.from_code(f"  {code.lower()}\n").number == number


@given(st.integers(min_value=1, max_value=999_999))
def test_every_deal_code_round_trips_and_deals_all_104_cards(number: int) -> None:
    deal = Deal(number)
    assert Deal.from_code(deal.code) == deal
    assert eval(repr(deal)) == deal
    assert sorted(deal.card_ids) == list(range(104))
    dealt = [c for column in deal.columns for c in column] + list(deal.stock)
    assert sorted(dealt) == list(range(104))


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("EH2-N-AAAAAAB", "does not start with"),
        ("AAAAAAB", "does not start with"),
        ("EH1-X-AAAAAAB", "variant"),
        ("EH1-N-AAAAAB", "7 letters"),
        ("EH1-N-AAAAAAAB", "7 letters"),
        ("EH1-N-AAAAA1B", "only the letters A to Z"),
        ("EH1-N-AAAAÄAB", "only the letters A to Z"),
        ("EH1-N-AAAAAAA", "deal 0"),
        ("EH1-N-AACEXHO", "1,000,000"),
        ("EH1-N-ZZZZZZZ", "deals are numbered 1 to 999,999"),
    ],
)
def test_a_bad_deal_code_is_refused_with_what_is_wrong(code: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as refused:
        Deal.from_code(code)
    # The refusal carries its reason's code and fields, so a page says it in its own
    # language from the same template.
    error = refused.value
    assert isinstance(error, InvalidDealError)
    assert str(error) == DEAL_REASONS[error.code].format(**error.params)


@pytest.mark.parametrize("number", [0, -1, 1_000_000, True, "5", 5.0])
def test_a_bad_deal_number_is_refused(number: object) -> None:
    with pytest.raises(ValueError, match="1 to 999,999"):
        Deal(number)  # type: ignore[arg-type]


def test_deals_are_values() -> None:
    assert Deal(7) == Deal.from_code("EH1-N-AAAAAAH")
    assert Deal(7) != Deal(8)
    assert len({Deal(7), Deal(7), Deal(8)}) == 2


# ---------------------------------------------------------------- actions


def test_every_token_has_one_canonical_form_that_round_trips() -> None:
    assert len(TOKENS) == 2 + 18 * 19
    for token in TOKENS:
        action = Action.parse(token.lower())
        assert str(action) == token
        assert eval(repr(action)) == action


@pytest.mark.parametrize(
    ("token", "source", "target"),
    [
        ("S", None, None),
        ("U", None, None),
        ("37", "3", "7"),
        ("W3", "W", "3"),
        ("WF", "W", "F"),
        ("3F", "3", "F"),
        ("3F2", "3", "F2"),
        ("F27", "F2", "7"),
        ("F1F8", "F1", "F8"),
    ],
)
def test_an_action_names_its_places(token: str, source: str | None, target: str | None) -> None:
    action = Action.parse(token)
    assert (action.source, action.target) == (source, target)
    assert action.is_stock == (token == "S") and action.is_undo == (token == "U")


@pytest.mark.parametrize(
    "text",
    ["", "X", "SS", "3", "30", "03", "3F9", "3F0", "F7", "F97", "F0", "10", "3 7", "W", "UU"],
)
def test_text_that_is_not_an_action_is_invalid(text: str) -> None:
    with pytest.raises(InvalidActionError) as invalid:
        Action.parse(text)
    assert invalid.value.code == "unreadable_action"
    assert isinstance(invalid.value, ValueError)


def test_a_log_reads_in_any_case_and_any_blanks() -> None:
    assert parse_log("  s\tw3 \n\n 3f2  f27 u ") == ["S", "W3", "3F2", "F27", "U"]
    assert parse_log(["s", " w3 ", "3F2"]) == ["S", "W3", "3F2"]
    assert parse_log("") == [] and parse_log("   \n") == []
    assert format_log(["s", "w3", "3f2"]) == "S W3 3F2"
    assert format_log(" s\tw3   3f2 ") == "S W3 3F2"


def test_an_unreadable_log_token_is_reported_with_its_index() -> None:
    with pytest.raises(InvalidActionError) as invalid:
        parse_log("S 37 3x7 S")
    assert (invalid.value.index, invalid.value.token) == (3, "3x7")
    assert str(invalid.value).startswith('action 3 "3x7": ')


_TOKEN = st.sampled_from(sorted(TOKENS))
_BLANKS = st.text(alphabet=" \t\n\r", min_size=1, max_size=3)


@given(st.lists(st.tuples(_TOKEN, st.booleans(), _BLANKS), max_size=40))
def test_formatting_then_parsing_a_log_gives_it_back(
    items: list[tuple[str, bool, str]],
) -> None:
    tokens = [token for token, _, _ in items]
    written = "".join(blank + (t.lower() if lower else t) for t, lower, blank in items)
    assert parse_log(written) == tokens
    assert parse_log(format_log(tokens)) == tokens
    assert format_log(parse_log(written)) == " ".join(tokens)


@pytest.mark.parametrize("text", ["ſ", "3ſ", "ſ W3"])
def test_only_ascii_letters_are_read_in_any_case(text: str) -> None:
    # "ſ".upper() == "S" in Python; a log must not read it as a stock tap.
    with pytest.raises(InvalidActionError):
        parse_log(text)
    with pytest.raises(InvalidActionError):
        parse_log(text.split())


def test_a_deal_code_or_card_with_a_letter_that_upper_cases_to_ascii_is_refused() -> None:
    with pytest.raises(ValueError, match="only the letters A to Z"):
        Deal.from_code("EH1-N-AAAAAıB")
    with pytest.raises(ValueError, match="not a card"):
        Card.parse("Tſ")
