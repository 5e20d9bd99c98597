"""Property: a watcher who connects at any moment of a player's streamed attempt sees
the game: its snapshot and the messages after it are the game played, with no
action skipped or sent twice, in the table view (the player watching their own
game) as in the progress view (anyone else while it is open).

The watcher's connect is held after one of its reads of the database (hypothesis
chooses which) while the player stores some actions: the moments where, on a
server, other sockets run. Then the player streams the rest without waiting,
pausing as hypothesis chooses.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any
from unittest.mock import patch

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import connections
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from easyharp_site.asgi import application
from games import watch
from games.models import DailyDeal
from tests.fixtures import DEAL, play_ranked
from tests.games.test_attempt_stream import answer, send_action, session_cookie, started
from tests.games.test_attempt_watch import progress_of
from tests.streamed import legal_game

pytestmark = pytest.mark.django_db(transaction=True)

PLAYERS = itertools.count()


async def socket_at(path: str, viewer: AbstractBaseUser) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
    headers.append(await database_sync_to_async(session_cookie)(viewer))
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect()
    assert connected
    return communicator


class WatchingPage:
    """What a watching page makes of the messages: the table (its log) or the progress,
    each message checked to follow the one before without a gap or a repeat."""

    def __init__(self) -> None:
        self.view: str | None = None
        self.log: list[str] = []
        self.progress: dict[str, Any] = {}

    def take(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "snapshot":
            self.view = message["view"]
            self.log = message["log"].split() if message["view"] == "table" else []
            self.progress = {key: message[key] for key in progress_of([])}
        elif kind == "actions":
            assert self.view == "table", message
            assert message["from"] == len(self.log) + 1, (len(self.log), message)
            self.log += message["actions"]
        elif kind == "progress":
            assert self.view == "progress", message
            assert message["actions"] > self.progress["actions"], (self.progress, message)
            self.progress = {key: message[key] for key in progress_of([])}
        else:
            assert kind == "pong", message

    def has(self, count: int) -> bool:
        if self.view == "table":
            return len(self.log) >= count
        return self.view == "progress" and self.progress["actions"] >= count


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 10_000),
    length=st.integers(1, 24),
    before=st.integers(0, 24),
    held_at=st.integers(1, 3),
    during=st.integers(0, 6),
    pauses=st.lists(st.integers(0, 12), min_size=24, max_size=24),
    own=st.booleans(),
)
def test_a_watcher_connecting_at_any_moment_gets_a_snapshot_and_messages_that_are_the_game(
    daily: DailyDeal,
    seed: int,
    length: int,
    before: int,
    held_at: int,
    during: int,
    pauses: list[int],
    own: bool,
) -> None:
    game = legal_game(DEAL, seed, length)
    before = min(before, len(game))
    during = min(during, len(game) - before)
    users = get_user_model().objects
    alice = users.create_user(username=f"player{next(PLAYERS)}")
    started(alice)
    viewer = alice
    if not own:
        viewer = users.create_user(username=f"viewer{next(PLAYERS)}")
        play_ranked(viewer, "S")
    day = timezone.now().date().isoformat()

    async def run() -> None:
        player = await socket_at(f"/ws/daily/{day}/attempt/", alice)
        assert (await answer(player))["type"] == "state"

        async def play(first: int, last: int) -> None:
            """Actions `first`..`last`, stored: each acknowledged."""
            for number in range(first, last + 1):
                await send_action(player, number, game[number - 1])
            while last >= first:
                message = await answer(player)
                if message["type"] == "ack" and message["n"] == last:
                    return
                assert message["type"] in {"ack", "watchers"}, message

        reads = 0
        original = database_sync_to_async

        def held(function: Any) -> Any:
            run = original(function)

            async def call(*args: Any, **kwargs: Any) -> Any:
                nonlocal reads
                result = await run(*args, **kwargs)
                reads += 1
                if reads == held_at:
                    await play(before + 1, before + during)
                return result

            return call

        await play(1, before)
        path = f"/ws/daily/{day}/players/{alice.get_username()}/attempt/"
        with patch.object(watch, "database_sync_to_async", held):
            watcher = await socket_at(path, viewer)
            page = WatchingPage()
            page.take(await watcher.receive_json_from(timeout=20))
        if reads < held_at:  # the connect read less often: the actions come now
            await play(before + 1, before + during)
        for number in range(before + during + 1, len(game) + 1):
            await asyncio.sleep(pauses[number - 1] / 1000)
            await send_action(player, number, game[number - 1])
        async with asyncio.timeout(20):  # a page that froze never gets there
            while not page.has(len(game)):
                page.take(await watcher.receive_json_from(timeout=20))
        assert page.view == ("table" if own else "progress")
        if own:
            assert page.log == game
        else:
            assert page.progress == progress_of(game)
        await watcher.disconnect()
        await player.disconnect()

    async_to_sync(run)()
    # The sockets' database work ran in Channels' database thread: close its connection.
    async_to_sync(database_sync_to_async(connections.close_all))()
