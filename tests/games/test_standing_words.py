"""A place among a board's players in words: a percentage in the middle, the place
itself at the ends, where "better than 100%" alone and "better than 0%" last read
wrong; in each language, and as the pages' script (daily.js `standing`) picks them."""

from __future__ import annotations

import pytest
from django.utils import translation

from games.web import standing_key, standing_text


@pytest.mark.parametrize(
    ("rank", "total", "percentile", "words"),
    [
        (1, 1, 100, "Alone on the board"),
        (1, 12, 100, "Best of 12"),
        (12, 12, 0, "Last of 12"),
        (2, 2, 0, "Last of 2"),
        (4, 12, 73, "Better than 73%"),
    ],
)
def test_the_ends_say_the_place_and_the_middle_a_percentage(rank, total, percentile, words):
    with translation.override("en"):
        assert standing_text(rank=rank, total=total, percentile=percentile) == words


@pytest.mark.parametrize(
    ("language", "best", "last", "middle", "alone"),
    [
        (
            "es",
            "A la cabeza de 5",
            "Último puesto de 5",
            "Por delante del 50 %",
            "Sin rivales",
        ),
        ("nl", "Beste van 5", "Laatste van 5", "Beter dan 50%", "Als enige op de ranglijst"),
    ],
)
def test_the_words_are_translated(language, best, last, middle, alone):
    with translation.override(language):
        assert standing_text(rank=1, total=5, percentile=100) == best
        assert standing_text(rank=5, total=5, percentile=0) == last
        assert standing_text(rank=3, total=5, percentile=50) == middle
        assert standing_text(rank=1, total=1, percentile=100) == alone


def test_a_shared_last_place_on_a_tie_is_still_the_last():
    assert standing_key(3, 3) == "standing_last" and standing_key(1, 2) == "standing_best"
