"""Property: however a page's actions reach the attempt's socket (resent, duplicated, cut
off by reconnects at any moment), the stored game is the game played, in order, once.

The client here behaves as the play page does: it numbers each action by its
place in the log, sends it when played, and after each (re)connect sends
again every action past the `state`'s count. Hypothesis chooses when it plays,
resends an old action, or drops the socket (without waiting for the answers on
their way).
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.db import connections
from django.test import Client
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from easyharp_site.asgi import application
from games.models import Attempt, DailyDeal
from games.rules import Game as Play
from games.services import attempt_start
from tests.fixtures import DEAL

pytestmark = pytest.mark.django_db(transaction=True)

PLAYERS = itertools.count()


def legal_game(seed: int, length: int) -> list[str]:
    """Up to `length` random legal actions on today's deal, undos included."""
    rng = random.Random(seed)
    play = Play(DEAL)
    for _ in range(length):
        actions = list(play.legal_actions())
        if not actions:
            break
        play.play(rng.choice(actions))
    return play.log


class Page:
    """The page's side: the game played so far, and its socket."""

    def __init__(self, cookie: tuple[bytes, bytes]) -> None:
        self.cookie = cookie
        self.played: list[str] = []
        self.socket: WebsocketCommunicator | None = None

    async def connect(self) -> None:
        headers = [(b"origin", b"http://testserver"), (b"host", b"testserver"), self.cookie]
        path = f"/ws/daily/{timezone.now().date().isoformat()}/attempt/"
        self.socket = WebsocketCommunicator(application, path, headers=headers)
        connected, _ = await self.socket.connect()
        assert connected
        state = await self.socket.receive_json_from(timeout=5)
        assert state["type"] == "state", state
        assert self.played[: state["actions"]] == state["log"].split()
        # The queue: every action the server has not stored.
        for number in range(state["actions"] + 1, len(self.played) + 1):
            await self.send(number)

    async def send(self, number: int) -> None:
        assert self.socket is not None
        token = self.played[number - 1]
        await self.socket.send_json_to({"type": "action", "n": number, "action": token})

    async def drop(self) -> None:
        """The network goes: the socket is gone, whatever was on its way."""
        assert self.socket is not None
        await self.socket.disconnect()
        self.socket = None

    async def all_stored(self) -> None:
        """Wait for the acknowledgement of the last action (refusing nothing on the way)."""
        assert self.socket is not None
        while self.played:
            message: dict[str, Any] = await self.socket.receive_json_from(timeout=5)
            assert message["type"] in {"ack", "state"}, message
            if message["type"] == "ack" and message["n"] == len(self.played):
                return


steps = st.lists(
    st.one_of(
        st.just(("play", 0)),
        st.just(("drop", 0)),
        st.tuples(st.just("again"), st.integers(min_value=1, max_value=40)),
    ),
    max_size=60,
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=st.integers(0, 10_000), length=st.integers(0, 40), plan=steps)
def test_any_interleaving_of_actions_reconnects_and_duplicates_stores_the_game_in_order(
    daily: DailyDeal, seed: int, length: int, plan: list[tuple[str, int]]
) -> None:
    game = legal_game(seed, length)
    player = get_user_model().objects.create_user(username=f"player{next(PLAYERS)}")
    attempt, _ = attempt_start(player=player, date=timezone.now().date())
    browser = Client()
    browser.force_login(player)
    page = Page((b"cookie", f"sessionid={browser.cookies['sessionid'].value}".encode()))

    async def run() -> None:
        await page.connect()
        for step, value in plan:
            if step == "play" and len(page.played) < len(game):
                page.played.append(game[len(page.played)])
                if page.socket is not None:
                    await page.send(len(page.played))
            elif step == "drop" and page.socket is not None:
                await page.drop()
            elif step == "drop":
                await page.connect()
            elif step == "again" and page.socket is not None and value <= len(page.played):
                await page.send(value)
        page.played.extend(game[len(page.played) :])
        if page.socket is None:
            await page.connect()
        else:
            for number in range(1, len(page.played) + 1):
                await page.send(number)
        await page.all_stored()
        assert page.socket is not None
        await page.socket.disconnect()

    async_to_sync(run)()
    # The socket's database work ran in Channels' database thread: close its connection.
    async_to_sync(database_sync_to_async(connections.close_all))()

    stored = Attempt.objects.get(pk=attempt.pk)
    assert stored.log.split() == game
    assert len(stored.action_times()) == len(game)
    assert stored.action_times() == sorted(stored.action_times())
