"""docs/SOCKETS.md's message examples, held to the consumers.

Each protocol's section of the page has a ```json socket block, one message a
line: `→ {…}` what the client sends, `← {…}` what the server sends. Every
line must be JSON, and each is compared with a real exchange through the whole
ASGI stack (`WebsocketCommunicator`, signed in by the session cookie, the real
services and database): a message of the same type, with the same keys (and
the same keys in the objects it holds), must pass on that socket in that
direction.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import connections
from django.utils import timezone

from easyharp_site.asgi import application
from games.models import DailyDeal
from ranking.actions import game_submit
from tests.fixtures import DEAL, WIN_LOG, play_ranked
from tests.games.test_attempt_stream import session_cookie, started
from tests.paths import ROOT
from tests.races.racing import race_for, running

pytestmark = pytest.mark.django_db(transaction=True)

PAGE = ROOT / "docs" / "SOCKETS.md"
SECTIONS = {
    "Live boards": "board",
    "The ranked attempt": "attempt",
    "Watching an attempt": "watch",
    "Races": "race",
}
BLOCK = re.compile(r"^```json socket\n(.*?)^```$", re.MULTILINE | re.DOTALL)

# Messages seen on each protocol: (direction, type) -> the messages.
Seen = dict[tuple[str, str], list[dict[str, Any]]]


def documented() -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Each protocol's examples, in page order: (direction, message)."""
    found: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for part in re.split(r"^## ", PAGE.read_text(), flags=re.MULTILINE)[1:]:
        title = part.splitlines()[0].strip()
        if title not in SECTIONS:
            continue
        blocks = BLOCK.findall(part)
        assert len(blocks) == 1, f"{title}: one ```json socket block"
        examples = []
        for line in blocks[0].splitlines():
            if not line.strip():
                continue
            direction, _, text = line.partition(" ")
            assert direction in {"→", "←"}, line
            examples.append((direction, json.loads(text)))
        found[SECTIONS[title]] = examples
    return found


def shape_problem(example: Any, actual: Any, where: str) -> str | None:
    """Where `actual` has other keys than `example` (objects compared key by key,
    lists by their first items); None when the shapes agree."""
    if isinstance(example, dict) and isinstance(actual, dict):
        if set(example) != set(actual):
            return f"{where}: documented {sorted(example)}, sent {sorted(actual)}"
        for key in example:
            problem = shape_problem(example[key], actual[key], f"{where}.{key}")
            if problem:
                return problem
    if isinstance(example, list) and isinstance(actual, list) and example and actual:
        return shape_problem(example[0], actual[0], f"{where}[0]")
    return None


class Recorder:
    """A socket whose messages, both ways, are kept by type."""

    def __init__(self, seen: Seen, path: str) -> None:
        self.seen, self.path = seen, path
        self.communicator: WebsocketCommunicator | None = None

    async def open(self, player: AbstractBaseUser | None) -> Recorder:
        headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
        if player is not None:
            headers.append(await database_sync_to_async(session_cookie)(player))
        self.communicator = WebsocketCommunicator(application, self.path, headers=headers)
        connected, _ = await self.communicator.connect()
        assert connected
        return self

    async def send(self, message: dict[str, Any]) -> None:
        assert self.communicator is not None
        self.seen.setdefault(("→", message["type"]), []).append(message)
        await self.communicator.send_json_to(message)

    async def until(self, kind: str) -> dict[str, Any]:
        """Messages up to the next of type `kind`, that one returned."""
        assert self.communicator is not None
        while True:
            message: dict[str, Any] = await self.communicator.receive_json_from(timeout=30)
            self.seen.setdefault(("←", message["type"]), []).append(message)
            if message["type"] == kind:
                return message

    async def close(self) -> None:
        assert self.communicator is not None
        await self.communicator.disconnect()


@pytest.fixture(autouse=True)
async def _close_database_thread_connections() -> AsyncIterator[None]:
    yield
    await database_sync_to_async(connections.close_all)()


@pytest.fixture
def memory_layer(settings: Any) -> None:
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    settings.LIVE_BOARD_MAX_UPDATES_PER_SECOND = 20


async def board_exchange(alice: AbstractBaseUser, bob: AbstractBaseUser) -> Seen:
    seen: Seen = {}
    today = timezone.now().date().isoformat()
    await database_sync_to_async(play_ranked)(alice, WIN_LOG)
    socket = await Recorder(seen, f"/ws/daily/{today}/leaderboard/?order=score").open(alice)
    await socket.until("snapshot")
    await socket.send({"type": "ping"})
    await socket.until("pong")
    await database_sync_to_async(play_ranked)(bob, "S")
    await socket.until("update")
    await socket.close()
    return seen


async def attempt_and_watch_exchange(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> tuple[Seen, Seen]:
    """alice streams her attempt while bob, who has played, watches it: what
    passed on her socket, and on his."""
    seen: Seen = {}
    today = timezone.now().date().isoformat()
    await database_sync_to_async(play_ranked)(bob, "S")
    await database_sync_to_async(started)(alice)
    player = await Recorder(seen, f"/ws/daily/{today}/attempt/").open(alice)
    await player.until("state")
    watched: Seen = {}
    watcher = await Recorder(watched, f"/ws/daily/{today}/players/alice/attempt/").open(bob)
    await watcher.until("snapshot")
    await watcher.send({"type": "ping"})
    await watcher.until("pong")
    await player.until("watchers")
    await player.send({"type": "action", "n": 1, "action": WIN_LOG[0]})
    await player.until("ack")
    await watcher.until("progress")
    await player.send({"type": "action", "n": 2, "action": "12"})
    await player.until("refused")
    await database_sync_to_async(game_submit)(player=alice, deal=DEAL, log=WIN_LOG[0])
    await watcher.until("closed")
    await watcher.until("snapshot")
    await watcher.close()
    await player.close()
    return seen, watched


async def race_exchange(alice: AbstractBaseUser, bob: AbstractBaseUser) -> Seen:
    seen: Seen = {}
    race = await database_sync_to_async(lambda: running(race_for(alice, bob)))()
    player = await Recorder(seen, f"/ws/races/{race.code}/").open(alice)
    await player.until("welcome")
    await player.send({"type": "action", "n": 1, "action": WIN_LOG[0]})
    await player.until("ack")
    await player.send({"type": "action", "n": 3, "action": "S"})
    await player.until("refused")
    await player.send({"type": "ping"})
    await player.until("race")
    watched: Seen = {}
    watcher = await Recorder(watched, f"/ws/races/{race.code}/").open(None)
    await watcher.until("watching")
    await watcher.close()
    await player.close()
    for key, messages in watched.items():
        seen.setdefault(key, []).extend(messages)
    return seen


def test_every_example_on_the_page_is_json_and_every_protocol_has_some() -> None:
    examples = documented()
    assert set(examples) == set(SECTIONS.values())
    for protocol, lines in examples.items():
        assert {d for d, _ in lines} == {"→", "←"}, protocol
        assert all("type" in message for _, message in lines), protocol


def check(protocol: str, seen: Seen) -> None:
    for direction, example in documented()[protocol]:
        sent = seen.get((direction, example["type"]))
        assert sent, f"{protocol}: no {direction} {example['type']} in a real exchange"
        problems = [shape_problem(example, actual, example["type"]) for actual in sent]
        assert None in problems, f"{protocol}: {problems[0]}"


async def test_the_live_board_examples_match_the_consumer(
    alice: AbstractBaseUser, bob: AbstractBaseUser, daily: DailyDeal, memory_layer: None
) -> None:
    check("board", await board_exchange(alice, bob))


async def test_the_attempt_and_watch_examples_match_the_consumers(
    alice: AbstractBaseUser, bob: AbstractBaseUser, daily: DailyDeal, memory_layer: None
) -> None:
    attempt, watch = await attempt_and_watch_exchange(alice, bob)
    check("attempt", attempt)
    check("watch", watch)


async def test_the_race_examples_match_the_consumer(
    alice: AbstractBaseUser, bob: AbstractBaseUser, memory_layer: None
) -> None:
    check("race", await race_exchange(alice, bob))


def test_a_documented_key_the_consumer_does_not_send_is_found() -> None:
    assert shape_problem({"type": "ack", "n": 1}, {"type": "ack", "n": 1, "version": 1}, "ack")
    assert (
        shape_problem({"a": {"b": 1}}, {"a": {"c": 1}}, "x") == "x.a: documented ['b'], sent ['c']"
    )
    assert shape_problem({"a": [{"b": 1}]}, {"a": [{"b": 2}]}, "x") is None
