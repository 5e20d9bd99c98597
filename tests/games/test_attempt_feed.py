"""The feed of stored actions: gathered per shard of attempts, handed to each watcher in order."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.layers import get_channel_layer

from games.live import FEED_BACKLOG_MAX, FEED_SHARDS, AttemptFeed, actions_stored, feed_group


class Watcher:
    """A watching socket: the feed items it was handed (`from`, `actions`, `elapsed_ms`,
    and `progress` when the sender gave it)."""

    def __init__(self) -> None:
        self.texts: list[dict[str, Any]] = []
        self.resets = 0
        self.more = asyncio.Event()

    async def actions_passed(
        self, first: int, actions: list[str], elapsed_ms: int, progress: Any = None
    ) -> None:
        item = {"from": first, "actions": actions, "elapsed_ms": elapsed_ms}
        self.texts.append({**item, "progress": progress} if progress is not None else item)
        self.more.set()

    async def attempt_reset(self, event: dict[str, Any]) -> None:
        self.resets += 1

    async def next_ones(self, count: int) -> list[dict[str, Any]]:
        async with asyncio.timeout(10):
            while len(self.texts) < count:
                self.more.clear()
                await self.more.wait()
        return self.texts


@pytest.fixture
async def feed() -> AsyncIterator[AttemptFeed]:
    feed = AttemptFeed.current()
    yield feed
    if feed._receiver is not None:
        feed._receiver.cancel()


async def test_the_actions_of_one_gathering_travel_in_one_message_per_shard(
    feed: AttemptFeed,
) -> None:
    layer = get_channel_layer()
    listening = await layer.new_channel()
    await layer.group_add(feed_group(1), listening)

    # Attempts 1 and 1 + FEED_SHARDS share a shard; attempt 2 has another.
    progress = {"actions": 2, "score": 5, "moves": 2, "foundations": 0, "won": False}
    actions_stored(1, 1, ["S"], 100)
    actions_stored(2, 5, ["41"], 150)
    actions_stored(1 + FEED_SHARDS, 3, ["S", "U"], 200)
    actions_stored(1, 2, ["41"], 300, progress=progress)

    async with asyncio.timeout(10):
        message = await layer.receive(listening)
    assert message["type"] == "attempts.actions"
    assert message["items"] == [
        [1, 1, ["S"], 100, None],
        [1 + FEED_SHARDS, 3, ["S", "U"], 200, None],
        [1, 2, ["41"], 300, progress],
    ]
    await layer.group_discard(feed_group(1), listening)


async def test_each_watcher_gets_its_attempts_actions_in_order_until_it_leaves(
    feed: AttemptFeed,
) -> None:
    first, second, other = Watcher(), Watcher(), Watcher()
    await feed.watch(7, first)
    await feed.watch(7, second)
    await feed.watch(7 + FEED_SHARDS, other)

    for number in range(1, 6):
        actions_stored(7, number, [f"A{number}"], number * 10, progress={"actions": number})
        if number % 2:
            await asyncio.sleep(0)  # some in one gathering, some in the next
    actions_stored(7 + FEED_SHARDS, 1, ["S"], 5)

    for watcher in (first, second):
        moves = await watcher.next_ones(5)
        assert [(move["from"], move["actions"]) for move in moves] == [
            (number, [f"A{number}"]) for number in range(1, 6)
        ]
        assert moves[0] == {
            "from": 1, "actions": ["A1"], "elapsed_ms": 10, "progress": {"actions": 1}
        }  # fmt: skip
    assert [move["from"] for move in await other.next_ones(1)] == [1]

    feed.unwatch(7, first)
    actions_stored(7, 6, ["A6"], 60)
    assert [move["from"] for move in await second.next_ones(6)][-1] == 6
    assert len(first.texts) == 5, "a watcher that left is handed nothing more"


async def test_the_process_leaves_a_shard_with_its_last_watcher_and_joins_it_again(
    feed: AttemptFeed,
) -> None:
    watcher = Watcher()
    await feed.watch(3, watcher)
    feed.unwatch(3, watcher)
    async with asyncio.timeout(10):
        while feed._tasks:  # the leave runs in a task of its own
            await asyncio.sleep(0.01)
    assert feed_group(3) not in feed._joined
    layer = get_channel_layer()
    listening = await layer.new_channel()
    await layer.group_add(feed_group(3), listening)
    actions_stored(3, 1, ["S"], 0)
    async with asyncio.timeout(10):
        await layer.receive(listening)  # the message went out (to this listener only)
    assert watcher.texts == []

    again = Watcher()
    await feed.watch(3, again)
    actions_stored(3, 2, ["41"], 0)
    assert (await again.next_ones(1))[0]["from"] == 2
    await layer.group_discard(feed_group(3), listening)


class SlowWatcher(Watcher):
    """A socket whose client does not read: its first send waits until released."""

    def __init__(self) -> None:
        super().__init__()
        self.released = asyncio.Event()

    async def actions_passed(
        self, first: int, actions: list[str], elapsed_ms: int, progress: Any = None
    ) -> None:
        await self.released.wait()
        await super().actions_passed(first, actions, elapsed_ms, progress)


async def test_a_watcher_that_does_not_read_holds_up_no_other_and_catches_up_by_a_snapshot(
    feed: AttemptFeed,
) -> None:
    slow, quick = SlowWatcher(), Watcher()
    await feed.watch(5, slow)
    await feed.watch(5, quick)
    count = FEED_BACKLOG_MAX + 10
    for number in range(1, count + 1):
        actions_stored(5, number, ["S"], number)
        if number % 10 == 0:  # ten writes a gathering, as a busy attempt makes
            await quick.next_ones(number)

    assert len(await quick.next_ones(count)) == count
    assert slow.texts == [] and slow.resets == 0

    slow.released.set()
    async with asyncio.timeout(10):
        while slow.resets == 0:
            await asyncio.sleep(0.01)
    # What waited was sent in order, what overflowed was dropped, and a snapshot followed.
    numbers = [move["from"] for move in slow.texts]
    assert numbers == list(range(1, len(numbers) + 1))
    assert len(numbers) <= FEED_BACKLOG_MAX + 1 < count
