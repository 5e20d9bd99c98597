"""The examples in the engine's docstrings run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "games.rules",
    "games.rules.actions",
    "games.rules.cards",
    "games.rules.deal",
    "games.rules.game",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
    assert result.attempted > 0
