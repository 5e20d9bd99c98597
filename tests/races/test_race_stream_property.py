"""Property: however a race page's actions reach the race's socket (resent, duplicated,
cut off by reconnects at any moment), the stored game is the game played, in order,
once.

The page (`tests.streamed.StreamingPage`) behaves as the race page does: it
numbers each action by its place in the log, sends it when played, and after
each (re)connect sends again every action past the `welcome`'s count; the
race's states may come between the acknowledgements.
"""

from __future__ import annotations

import itertools

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.db import connections
from django.utils import timezone
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from races.models import Racer
from tests.races.racing import RACE_DEAL, race_for, running, session_cookie
from tests.streamed import StreamingPage, legal_game, steps
from tests.timings import pinned

pytestmark = pytest.mark.django_db(transaction=True)

PLAYERS = itertools.count()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=st.integers(0, 10_000), length=st.integers(0, 40), plan=steps)
# An action sent and the socket gone at once: the next socket's opening message
# holds it (nothing is left to acknowledge) or not (it is sent again).
@example(seed=0, length=1, plan=[("play", 0), ("drop", 0)])
def test_any_interleaving_of_actions_reconnects_and_duplicates_stores_the_game_in_order(
    seed: int, length: int, plan: list[tuple[str, int]]
) -> None:
    game = legal_game(RACE_DEAL, seed, length)
    player = get_user_model().objects.create_user(username=f"racer{next(PLAYERS)}")
    # A person plays: each action is received 100 ms after the server's clock was
    # last read, or later (a race refuses moves at a machine's pace).
    with pinned(timezone.now().date(), step_ms=100):
        race = running(race_for(player))
        page = StreamingPage(
            session_cookie(player), f"/ws/races/{race.code}/", first="welcome", passing={"race"}
        )

        async def run() -> None:
            await page.play(game, plan)

        async_to_sync(run)()
    # The socket's database work ran in Channels' database thread: close its connection.
    async_to_sync(database_sync_to_async(connections.close_all))()

    stored = Racer.objects.get(race=race, player=player)
    assert stored.log.split() == game
    assert stored.version <= len(game)
    assert len(stored.times) == len(game) and stored.times == sorted(stored.times)
