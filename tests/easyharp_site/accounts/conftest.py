"""The account tests use the same players, clients and day as the game tests.

Tests that send mail run with real commits (`transaction=True`): mail is
queued when the request's transaction commits.
"""

from tests.fixtures import (  # noqa: F401
    alice,
    anon,
    bob,
    daily,
    make_player,
    today,
)

# The password `make_player` gives every player.
PASSWORD = "a-long-passphrase"
NEW_PASSWORD = "another long passphrase"
