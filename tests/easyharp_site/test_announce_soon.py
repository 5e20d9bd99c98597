"""Announcements from synchronous code: a request's thread under the server hands them
to the server's loop and goes on; elsewhere they run to their end; failures are logged."""

from __future__ import annotations

import asyncio
import logging

import pytest
from asgiref.sync import sync_to_async

from easyharp_site.layer import announce_soon

logger = logging.getLogger("tests.announce")


async def test_in_a_requests_thread_the_announcement_runs_on_the_loop_after_it_returns() -> None:
    release = asyncio.Event()
    heard: list[str] = []

    async def announcement(name: str) -> None:
        await release.wait()
        heard.append(name)

    def view() -> list[str]:
        # As a view's thread does: handed on in order, and nothing waited for.
        announce_soon(announcement("first"), logger=logger, failed="lost")
        announce_soon(announcement("second"), logger=logger, failed="lost")
        return list(heard)

    assert await sync_to_async(view)() == []
    release.set()
    while len(heard) < 2:
        await asyncio.sleep(0)
    assert heard == ["first", "second"]


async def test_a_failure_on_the_loop_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    failed = asyncio.Event()

    async def announcement() -> None:
        failed.set()
        raise ConnectionError("Redis is away")

    await sync_to_async(announce_soon)(announcement(), logger=logger, failed="boards not told")
    await failed.wait()
    while not caplog.records:
        await asyncio.sleep(0)
    assert caplog.records[0].getMessage() == "boards not told"
    assert "Redis is away" in str(caplog.records[0].exc_info[1])


def test_without_a_server_it_runs_to_its_end_and_a_failure_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    heard: list[str] = []

    async def announcement() -> None:
        await asyncio.sleep(0)
        heard.append("told")

    async def failing() -> None:
        raise ConnectionError("Redis is away")

    announce_soon(announcement(), logger=logger, failed="lost")
    assert heard == ["told"]
    announce_soon(failing(), logger=logger, failed="not told")
    assert [record.getMessage() for record in caplog.records] == ["not told"]


async def test_called_on_the_loops_own_thread_it_becomes_a_task_of_that_loop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    heard: list[str] = []

    async def announcement() -> None:
        heard.append("told")

    async def failing() -> None:
        raise ConnectionError("Redis is away")

    # Synchronous code called straight from async code, as a test's fixture may.
    announce_soon(announcement(), logger=logger, failed="lost")
    announce_soon(failing(), logger=logger, failed="not told")
    assert heard == []
    while not heard or not caplog.records:
        await asyncio.sleep(0)
    assert heard == ["told"]
    assert [record.getMessage() for record in caplog.records] == ["not told"]
