"""Hypothesis fuzzing of the engine's readers: move logs, action tokens, deal codes, cards.

Properties: hostile input never raises anything but the documented errors
(`InvalidActionError`/`IllegalActionError`, both `ValueError`s, or `ValueError`
for deal codes and cards); what is accepted round-trips through its canonical
text; a refused log reports a 1-based index and the token as written.
"""

from __future__ import annotations

import random
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.rules import (
    DEAL_MAX,
    Action,
    Card,
    Deal,
    Game,
    IllegalActionError,
    InvalidActionError,
    format_log,
    parse_log,
    replay,
)

FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

PLACES_FROM = [str(n) for n in range(1, 10)] + ["W"] + [f"F{n}" for n in range(1, 9)]
PLACES_TO = [str(n) for n in range(1, 10)] + ["W", "F"] + [f"F{n}" for n in range(1, 9)]
CANONICAL = ["S", "U"] + [a + b for a in PLACES_FROM for b in PLACES_TO]

tokens = st.sampled_from(CANONICAL)
blanks = st.text(alphabet=" \t\n\r", min_size=1, max_size=3)
# Text a hostile client might send: control characters, look-alikes, SQL and
# HTML fragments, very long runs, unicode from every plane.
hostile_text = st.one_of(
    st.text(max_size=200),
    st.text(alphabet=st.characters(codec="ascii"), max_size=200),
    st.lists(
        st.one_of(
            tokens,
            st.sampled_from(["'; DROP TABLE games;--", "<script>", "F9", "0", "10", "W", "FF"]),
            st.text(min_size=1, max_size=5),
        ),
        max_size=40,
    ).map(" ".join),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)


def mixed_case(token: str, rng: random.Random) -> str:
    return "".join(ch.lower() if rng.random() < 0.5 else ch for ch in token)


@FUZZ
@given(hostile_text)
def test_reading_any_text_gives_tokens_or_an_unreadable_action_error(text: str) -> None:
    try:
        parsed = parse_log(text)
    except InvalidActionError as error:
        written = text.split()
        assert error.code == "unreadable_action"
        assert 1 <= error.index <= len(written)
        assert error.token == written[error.index - 1]
        assert str(error).startswith(f"action {error.index} ")
        return
    assert all(token in CANONICAL for token in parsed)
    assert len(parsed) == len(text.split())
    # Canonical text reads back to the same tokens.
    assert parse_log(format_log(parsed)) == parsed


@FUZZ
@given(st.lists(json_values, max_size=20))
def test_a_log_given_as_a_list_of_any_json_values_never_crashes(items: list[object]) -> None:
    try:
        parsed = parse_log(items)
    except InvalidActionError as error:
        assert 1 <= error.index <= len(items)
        assert isinstance(error.token, str)
        return
    assert all(token in CANONICAL for token in parsed)


@FUZZ
@given(st.lists(tokens, max_size=60), st.lists(blanks, min_size=61, max_size=61), st.randoms())
def test_case_and_blanks_do_not_change_a_log(
    log: list[str], gaps: list[str], rng: random.Random
) -> None:
    written = gaps[0] + "".join(mixed_case(t, rng) + gaps[i + 1] for i, t in enumerate(log))
    assert parse_log(written) == log
    assert format_log(written) == " ".join(log)
    assert parse_log([mixed_case(t, rng) for t in log]) == log


@FUZZ
@given(hostile_text)
def test_reading_one_action_gives_an_action_or_an_unreadable_action_error(text: str) -> None:
    try:
        action = Action.parse(text)
    except InvalidActionError as error:
        assert isinstance(error, ValueError)
        assert error.index is None
        return
    assert action.token in CANONICAL
    assert Action.parse(str(action)) == action
    assert eval(repr(action), {"Action": Action}) == action  # noqa: S307 - repr pastes back


@FUZZ
@given(st.integers(min_value=1, max_value=DEAL_MAX))
def test_every_deal_code_round_trips(number: int) -> None:
    deal = Deal(number)
    assert Deal.from_code(deal.code) == deal
    assert Deal.from_code(f"  {deal.code.lower()} ").number == number
    assert len(deal.cards) == 104


@FUZZ
@given(
    st.one_of(
        st.integers(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(),
        st.booleans(),
        st.none(),
        st.text(max_size=12),
    )
)
def test_a_deal_number_outside_one_to_999999_is_a_value_error(number: object) -> None:
    try:
        deal = Deal(number)  # type: ignore[arg-type]
    except ValueError:
        assert not (type(number) is int and 1 <= number <= DEAL_MAX)
        return
    assert type(number) is int and 1 <= number <= DEAL_MAX
    assert deal.number == number


@FUZZ
@given(
    st.one_of(
        hostile_text,
        st.from_regex(r"\A[Ee][Hh]1-[A-Za-z0-9]{0,2}-[A-Za-z0-9]{0,9}\Z"),
        st.from_regex(r"\AEH1-N-[A-Z]{7}\Z"),
        json_values,
    )
)
def test_any_deal_code_text_gives_a_deal_or_a_value_error(text: object) -> None:
    try:
        deal = Deal.from_code(text)  # type: ignore[arg-type]
    except ValueError as error:
        assert str(error)
        return
    assert 1 <= deal.number <= DEAL_MAX
    assert deal.code == str(text).strip().upper()


@FUZZ
@given(st.one_of(hostile_text, st.from_regex(r"\A[A2-9TJQK][SHDC]\Z")))
def test_any_card_text_gives_a_card_or_a_value_error(text: str) -> None:
    try:
        card = Card.parse(text)
    except ValueError as error:
        # Refused only when the text, blanks and case aside, names no card.
        assert not (text.isascii() and re.fullmatch(r"[A2-9TJQK][SHDC]", text.strip().upper()))
        assert str(error).startswith("not a card")
        return
    assert Card.parse(str(card)) == card
    assert str(card) == text.strip().upper()


@FUZZ
@given(st.integers(min_value=1, max_value=DEAL_MAX), st.lists(tokens, max_size=120))
def test_replaying_random_tokens_accepts_a_prefix_or_names_the_refused_action(
    number: int, log: list[str]
) -> None:
    try:
        game = replay(Deal(number), log)
    except IllegalActionError as error:
        assert 1 <= error.index <= len(log)
        assert error.token == log[error.index - 1]
        # Everything before the refused action is legal, and that action is not.
        before = replay(Deal(number), log[: error.index - 1])
        assert not before.is_legal(log[error.index - 1])
        return
    assert game.log == log


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=DEAL_MAX), st.randoms(use_true_random=False))
def test_a_random_legal_game_replays_to_the_same_result_from_its_canonical_log(
    number: int, rng: random.Random
) -> None:
    game = Game(Deal(number))
    for _ in range(rng.randint(0, 300)):
        legal = list(game.legal_actions())
        if not legal:
            break
        game.play(rng.choice(legal))
    again = replay(game.deal.code, format_log(game.log))
    assert (again.score, again.moves, again.is_won) == (game.score, game.moves, game.is_won)
    assert again.table() == game.table()
    if game.is_won:
        # Nothing is accepted after the win.
        for token in CANONICAL:
            assert not again.is_legal(token)


def test_a_log_of_twenty_thousand_and_one_actions_is_read_and_replayed_exactly() -> None:
    # Stock taps are always legal (unlimited passes), so the engine plays them all;
    # refusing logs over the 20,000-action cap is the service's job, tested there.
    log = " ".join(["s"] * 20_001)
    assert len(parse_log(log)) == 20_001
    game = replay(Deal(1), log)
    assert game.moves == 20_001
    assert game.score == 0
