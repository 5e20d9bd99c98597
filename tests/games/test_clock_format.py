"""A game's time reads the same on every page: the `clock` template filter cuts the
seconds as the pages' `clock` (games/static/games/daily.js) does, on the cases of
tests/js/clocks.json that Node's test checks the script on."""

from __future__ import annotations

import json

import pytest

from games.templatetags.clock import clock
from tests.paths import ROOT

CASES = json.loads((ROOT / "tests" / "js" / "clocks.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("milliseconds", "shown"), CASES)
def test_the_filter_shows_a_time_as_the_pages_scripts_do(milliseconds, shown):
    assert clock(milliseconds) == shown


def test_two_minutes_five_and_nine_tenths_is_two_minutes_five():
    assert clock(125_900) == "2:05"
