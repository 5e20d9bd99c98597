"""Property: however a page's actions reach the attempt's socket (resent, duplicated, cut
off by reconnects at any moment), the stored game is the game played, in order, once.

The page (`tests.streamed.StreamingPage`) behaves as the play page does: it
numbers each action by its place in the log, sends it when played, and after
each (re)connect sends again every action past the `state`'s count.
"""

from __future__ import annotations

import itertools

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.db import connections
from django.test import Client
from django.utils import timezone
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from games.models import Attempt, DailyDeal
from games.services import attempt_start
from tests.fixtures import DEAL
from tests.streamed import StreamingPage, legal_game, steps

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
    daily: DailyDeal, seed: int, length: int, plan: list[tuple[str, int]]
) -> None:
    game = legal_game(DEAL, seed, length)
    player = get_user_model().objects.create_user(username=f"player{next(PLAYERS)}")
    attempt, _ = attempt_start(player=player, date=timezone.now().date())
    browser = Client()
    browser.force_login(player)
    page = StreamingPage(
        (b"cookie", f"sessionid={browser.cookies['sessionid'].value}".encode()),
        f"/ws/daily/{timezone.now().date().isoformat()}/attempt/",
        first="state",
        passing={"state"},
    )

    async def run() -> None:
        await page.play(game, plan)

    async_to_sync(run)()
    # The socket's database work ran in Channels' database thread: close its connection.
    async_to_sync(database_sync_to_async(connections.close_all))()

    stored = Attempt.objects.get(pk=attempt.pk)
    assert stored.log.split() == game
    assert len(stored.action_times()) == len(game)
    assert stored.action_times() == sorted(stored.action_times())
