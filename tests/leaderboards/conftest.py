"""The leaderboard tests use the same players, clients and day as the game tests."""

from tests.games.conftest import (  # noqa: F401
    alice,
    anon,
    bob,
    daily,
    make_player,
    today,
)
