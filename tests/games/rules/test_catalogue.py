"""The browser's reason catalogue is generated from the engine's and cannot drift."""

from __future__ import annotations

import json
import re

from games.rules import REASONS
from games.rules.catalogue import reasons_module
from tests.paths import ROOT

CATALOGUE = ROOT / "games" / "static" / "games" / "reasons.js"


def test_the_committed_catalogue_is_what_make_catalogue_writes() -> None:
    assert CATALOGUE.read_text(encoding="utf-8") == reasons_module(), (
        "games/static/games/reasons.js is stale: run `make catalogue`"
    )


def test_the_catalogue_carries_every_reason_with_its_english_text() -> None:
    match = re.search(r"^export const REASONS = (\{.*\});$", reasons_module(), re.M | re.S)
    assert match, "the module exports no REASONS object"
    assert json.loads(match.group(1)) == REASONS
    for code in REASONS:
        assert f'"{code}":' in CATALOGUE.read_text(encoding="utf-8"), code


def test_the_catalogue_says_where_it_comes_from() -> None:
    header = reasons_module().splitlines()[0]
    assert "games/rules/errors.py" in header
    assert "make catalogue" in header
    assert "do not edit" in header
