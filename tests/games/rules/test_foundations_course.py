"""The course of a game: cards on the foundations after each part of its log."""

from __future__ import annotations

import pytest

from games.rules import IllegalActionError, foundations_course, replay
from tests.fixtures import DEAL, STOCK_CYCLE, VECTOR_GAMES, WIN_LOG


def test_a_won_game_ends_with_every_card_up_and_each_part_is_a_prefix_of_its_log():
    course = foundations_course(DEAL, WIN_LOG)
    assert course[-1] == 104
    for part, count in enumerate(course, start=1):
        prefix = WIN_LOG[: -(-len(WIN_LOG) * part // 4)]
        assert replay(DEAL, prefix).on_foundations == count


ACCEPTED = [game for game in VECTOR_GAMES if "refused_at" not in game][:40]


@pytest.mark.parametrize("game", ACCEPTED, ids=lambda game: game["deal"])
def test_the_last_count_is_the_replays_and_every_count_is_a_share_of_the_deck(game):
    course = foundations_course(game["deal"], game["log"])
    assert len(course) == 4
    assert all(0 <= count <= 104 for count in course)
    assert course[-1] == replay(game["deal"], game["log"]).on_foundations


def test_a_log_shorter_than_its_parts_and_a_longer_game_of_the_same_play():
    # Each part ends where its share of the log does, rounded up.
    assert foundations_course("EH1-N-AAAAAAC", "2F") == [1, 1, 1, 1]
    assert foundations_course("EH1-N-AAAAAAC", "S 2F") == [0, 0, 1, 1]
    # The same play after a cycle of the stock: the same end, reached later.
    assert foundations_course(DEAL, STOCK_CYCLE * 20 + WIN_LOG)[:2] == [0, 0]


def test_a_refused_log_raises_as_replay_does_and_parts_must_be_positive():
    with pytest.raises(IllegalActionError):
        foundations_course("EH1-N-AAAAAAF", "14 42")
    with pytest.raises(ValueError, match="parts"):
        foundations_course(DEAL, WIN_LOG, parts=0)
