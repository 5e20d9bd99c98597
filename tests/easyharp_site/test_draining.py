"""The writes a stopping server process waits for (`easyharp_site.draining`)."""

from __future__ import annotations

import asyncio

from easyharp_site import draining


def test_it_waits_for_a_write_and_for_the_one_it_starts_before_it_ends() -> None:
    written: list[str] = []

    async def second() -> None:
        await asyncio.sleep(0)
        written.append("second")

    async def first() -> None:
        await asyncio.sleep(0)
        written.append("first")
        draining.write_outliving_socket(asyncio.create_task(second()))

    async def stop() -> tuple[int, int]:
        draining.write_outliving_socket(asyncio.create_task(first()))
        before = draining.writes_under_way()
        return before, await draining.writes_finish(10)

    assert asyncio.run(stop()) == (1, 0)
    assert written == ["first", "second"]


def test_it_stops_waiting_after_its_timeout_and_says_how_many_are_left() -> None:
    async def stop() -> int:
        held = asyncio.Event()
        write = asyncio.create_task(held.wait())
        draining.write_outliving_socket(write)
        left = await draining.writes_finish(0.01)
        held.set()
        await write
        return left

    assert asyncio.run(stop()) == 1
