"""Property: however a race page's actions reach the race's socket (resent, duplicated,
cut off by reconnects at any moment), the stored game is the game played, in order,
once.

The client here behaves as the race page does: it numbers each action by its
place in the log, sends it when played, and after each (re)connect sends again
every action past the welcome's count. Hypothesis chooses when it plays,
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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from easyharp_site.asgi import application
from games.rules import Game as Play
from races.models import Racer
from tests.races.racing import RACE_DEAL, race_for, running, session_cookie

pytestmark = pytest.mark.django_db(transaction=True)

PLAYERS = itertools.count()


def legal_game(seed: int, length: int) -> list[str]:
    """Up to `length` random legal actions on the race's deal, undos included."""
    rng = random.Random(seed)
    play = Play(RACE_DEAL)
    for _ in range(length):
        actions = list(play.legal_actions())
        if not actions:
            break
        play.play(rng.choice(actions))
    return play.log


class Page:
    """The page's side: the game played so far, and its socket."""

    def __init__(self, cookie: tuple[bytes, bytes], code: str) -> None:
        self.cookie = cookie
        self.code = code
        self.played: list[str] = []
        self.socket: WebsocketCommunicator | None = None

    async def connect(self) -> None:
        headers = [(b"origin", b"http://testserver"), (b"host", b"testserver"), self.cookie]
        self.socket = WebsocketCommunicator(application, f"/ws/races/{self.code}/", headers=headers)
        connected, _ = await self.socket.connect()
        assert connected
        welcome = await self.socket.receive_json_from(timeout=5)
        assert welcome["type"] == "welcome", welcome
        assert self.played[: welcome["actions"]] == welcome["log"].split()
        # The queue: every action the server has not stored.
        for number in range(welcome["actions"] + 1, len(self.played) + 1):
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
            assert message["type"] in {"ack", "race"}, message
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
    seed: int, length: int, plan: list[tuple[str, int]]
) -> None:
    game = legal_game(seed, length)
    player = get_user_model().objects.create_user(username=f"racer{next(PLAYERS)}")
    race = running(race_for(player))
    page = Page(session_cookie(player), race.code)

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

    stored = Racer.objects.get(race=race, player=player)
    assert stored.log.split() == game
    assert stored.version <= len(game)
    assert len(stored.times) == len(game) and stored.times == sorted(stored.times)
