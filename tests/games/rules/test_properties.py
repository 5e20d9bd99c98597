"""Property tests over random legal play (hypothesis).

Each example picks a deal and a walk through it: at every step one of the
legal actions (undo included), and a few arbitrary tokens that are tried on a
copy. After every action the invariants of RULES.md must hold.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.rules import Game, IllegalActionError, Position, replay
from games.rules.actions import TOKENS
from games.rules.cards import is_red, rank_of

ALL_TOKENS = sorted(TOKENS)
#: Every action with a named place, in the order legal_actions yields them.
CANDIDATES = (
    ["S"]
    + [f"W{b}" for b in range(1, 10)]
    + [f"WF{k}" for k in range(1, 9)]
    + [f"{a}{b}" for a in range(1, 10) for b in range(1, 10) if a != b]
    + [f"{a}F{k}" for a in range(1, 10) for k in range(1, 9)]
    + [f"F{k}{b}" for k in range(1, 9) for b in range(1, 10)]
    + ["U"]
)


def cards_on_table(position: Position) -> list[int]:
    cards = list(position.stock) + list(position.waste)
    for column in position.down + position.up + position.foundations:
        cards.extend(column)
    return sorted(cards)


def assert_columns_are_valid_runs(position: Position) -> None:
    for down, up in zip(position.down, position.up, strict=True):
        # A face-down card never stays on top: it turns up at once.
        assert up or not down
        for below, above in zip(up, up[1:], strict=False):
            assert rank_of(below) == rank_of(above) + 1 and is_red(below) != is_red(above)


def undoable_part(game: Game) -> tuple[Position, dict[str, object]]:
    """What undo restores: everything but the move count and the history."""
    table = game.table()
    del table["moves"], table["undo_left"]
    return game.position(), table


@dataclass
class Tally:
    """The score recomputed from what each action visibly did to the table."""

    score: int = 0
    scored: frozenset[int] = frozenset()
    stack: list[tuple[int, frozenset[int]]] = field(default_factory=list)

    def action(self, token: str, before: Position, after: Position) -> None:
        self.stack.append((self.score, self.scored))
        if len(self.stack) > 100:
            self.stack.pop(0)
        on_before = {c for pile in before.foundations for c in pile}
        arrived = {c for pile in after.foundations for c in pile} - on_before
        for card in arrived:
            if card not in self.scored:
                self.score += 10
                self.scored |= {card}
        turned = sum(map(len, before.down)) - sum(map(len, after.down))
        assert turned in (0, 1)
        self.score += 5 * turned
        if token[0] == "W" and token[1:].isdigit():
            self.score += 5

    def undo(self) -> None:
        self.score, self.scored = self.stack.pop()


def kind_of(token: str) -> str:
    if token in ("S", "U"):
        return token
    if token[0] == "F":
        return "back"
    return "foundation" if "F" in token else "column"


walks = st.tuples(
    st.integers(min_value=1, max_value=999_999),
    st.lists(
        st.tuples(st.integers(min_value=0, max_value=10_000), st.sampled_from(ALL_TOKENS)),
        min_size=1,
        max_size=150,
    ),
)


def biased_walk(number: int, rng: random.Random, length: int) -> list[tuple[int, str]]:
    """Steps for a long game that reaches foundations, recycles and king runs.

    Uniform choices mostly shuffle cards between columns; this walk prefers the
    foundations and the stock, and sometimes takes a card back or undoes.
    """
    game = Game(number)
    steps = []
    for _ in range(length):
        legal = list(game.legal_actions())
        if not legal:
            break
        weights = [
            6 if "F" in t[1:] else 3 if t == "S" else 1 if t == "U" or t[0] == "F" else 2
            for t in legal
        ]
        token = rng.choices(legal, weights)[0]
        game.play(token)
        steps.append((legal.index(token), rng.choice(ALL_TOKENS)))
    return steps


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(walks)
def test_random_legal_play_keeps_every_invariant(walk: tuple[int, list[tuple[int, str]]]) -> None:
    check_walk(*walk)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=1, max_value=999_999), st.randoms(use_true_random=False))
def test_long_games_keep_every_invariant(number: int, rng: random.Random) -> None:
    check_walk(number, biased_walk(number, rng, 600))


def check_walk(number: int, steps: list[tuple[int, str]]) -> None:
    """Play `steps` (choice among the legal actions, a token to try) checking everything."""
    game = Game(number)
    tally = Tally()
    history: list[tuple[Position, dict[str, object]]] = []
    for choice, probe in steps:
        legal = list(game.legal_actions())
        # The quick generator agrees with the rules written out plainly.
        assert legal == [t for t in CANDIDATES if game.is_legal(t)]
        if not legal:
            break

        # An arbitrary token: accepted on a copy exactly when the rules say so,
        # and the original game never changes.
        before_probe = undoable_part(game)
        trial = game.copy()
        try:
            trial.play(probe)
            accepted = True
        except IllegalActionError:
            accepted = False
        assert accepted == game.is_legal(probe)
        if not probe.endswith("F"):  # legal_actions names the foundation
            assert accepted == (probe in legal)
        assert undoable_part(game) == before_probe

        token = legal[choice % len(legal)]
        before = game.position()
        moves_before = game.moves
        if token == "U":
            game.play(token)
            tally.undo()
            assert undoable_part(game) == history.pop()
            assert game.moves == moves_before
        else:
            history.append(undoable_part(game))
            if len(history) > 100:
                history.pop(0)
            game.play(token)
            tally.action(token, before, game.position())
            assert game.moves == moves_before + 1
            # Undo restores exactly the earlier table (tried on a copy).
            taken_back = game.copy()
            taken_back.undo()
            assert undoable_part(taken_back) == history[-1]

        position = game.position()
        assert cards_on_table(position) == list(range(104))
        assert_columns_are_valid_runs(position)
        assert game.score == tally.score
        assert game.undo_left == min(len(history), 100)
        assert game.moves == sum(1 for t in game.log if t != "U")

    # Replaying the log from scratch reaches the same game.
    again = replay(number, " ".join(game.log))
    assert again.position() == game.position()
    assert again.table() == game.table()


def test_the_long_walks_reach_every_kind_of_action() -> None:
    # Guards the generator: if it stopped reaching the foundations, taking
    # cards back or undoing, the property above would pass without testing much.
    kinds: Counter[str] = Counter()
    rng = random.Random(5)
    for number in (1, 4242, 500_000):
        game = Game(number)
        for choice, _probe in biased_walk(number, rng, 600):
            game.play(list(game.legal_actions())[choice])
        kinds.update(kind_of(token) for token in game.log)
    assert {"S", "U", "column", "foundation", "back"} <= set(kinds)
