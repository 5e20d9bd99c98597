"""The examples in the solver's docstrings run as written."""

from __future__ import annotations

import doctest

import pytest

import games.solver
import games.solver.layout


@pytest.mark.parametrize("module", [games.solver, games.solver.layout])
def test_doctests(module: object) -> None:
    failures, tried = doctest.testmod(module)  # type: ignore[arg-type]
    assert tried > 0
    assert failures == 0
