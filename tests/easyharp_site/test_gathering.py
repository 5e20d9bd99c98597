"""Work handed on by many requests after their commit, done once for all of them."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest
from asgiref.sync import sync_to_async

from easyharp_site.compat import server_loop
from easyharp_site.layer import Gathering

logger = logging.getLogger("tests.gathering")


class Flushes:
    """Each flush: its items, the thread it ran in and whether it knew the server's loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.calls: list[tuple[list[int], threading.Thread, bool]] = []
        self.done = asyncio.Event()
        self._loop = loop

    def __call__(self, items: list[int]) -> None:
        self.calls.append((items, threading.current_thread(), server_loop() is not None))
        self._loop.call_soon_threadsafe(self.done.set)


@pytest.mark.parametrize("blocking", [True, False])
async def test_the_items_of_many_requests_are_flushed_once_in_the_order_they_came(
    blocking: bool,
) -> None:
    flushes = Flushes(asyncio.get_running_loop())
    # A window long enough for three requests' thread hops on a loaded machine.
    gathering = Gathering(flushes, seconds=1.0, blocking=blocking, logger=logger)

    # Three requests, each in a thread of its own as a view runs.
    for item in (3, 1, 2):
        await sync_to_async(gathering.add, thread_sensitive=False)(item)
    assert flushes.calls == [], "nothing is done before the gathering ends"

    await asyncio.wait_for(flushes.done.wait(), 5)
    [(items, thread, knew_loop)] = flushes.calls
    assert items == [3, 1, 2]
    # Blocking work runs in an executor's thread, where it may still hand work to
    # the server's loop; the rest on the loop's own thread.
    assert (thread is not threading.main_thread()) is blocking
    assert knew_loop is blocking

    # The next item starts a new gathering.
    flushes.done.clear()
    await sync_to_async(gathering.add)(4)
    await asyncio.wait_for(flushes.done.wait(), 5)
    assert [call[0] for call in flushes.calls] == [[3, 1, 2], [4]]


def test_without_a_server_an_item_is_flushed_before_add_returns() -> None:
    flushed: list[list[int]] = []
    gathering = Gathering(flushed.append, seconds=60, blocking=True, logger=logger)
    gathering.add(7)
    gathering.add(8)
    assert flushed == [[7], [8]]


@pytest.mark.parametrize("blocking", [True, False])
async def test_a_failing_flush_is_logged_and_the_next_gathering_still_runs(
    blocking: bool, caplog: pytest.LogCaptureFixture
) -> None:
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    flushed: list[list[int]] = []

    def flush(items: list[int]) -> None:
        try:
            if items == [1]:
                raise ConnectionError("Redis is away")
            flushed.append(items)
        finally:
            loop.call_soon_threadsafe(done.set)

    gathering = Gathering(flush, seconds=0.01, blocking=blocking, logger=logger)
    await sync_to_async(gathering.add)(1)
    await asyncio.wait_for(done.wait(), 5)
    while not caplog.records:
        await asyncio.sleep(0.01)
    assert caplog.records[0].getMessage() == "Gathered work of 1 request(s) failed"
    assert "Redis is away" in str(caplog.records[0].exc_info[1])

    done.clear()
    await sync_to_async(gathering.add)(2)
    await asyncio.wait_for(done.wait(), 5)
    assert flushed == [[2]]


async def test_items_added_on_the_servers_loop_itself_are_gathered_too() -> None:
    flushes = Flushes(asyncio.get_running_loop())
    gathering = Gathering(flushes, seconds=0.05, blocking=False, logger=logger)

    # A socket's handler, on the loop.
    gathering.add(1)
    gathering.add(2)
    assert flushes.calls == []

    await asyncio.wait_for(flushes.done.wait(), 5)
    assert [items for items, _, _ in flushes.calls] == [[1, 2]]
