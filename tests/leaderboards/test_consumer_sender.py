"""A board socket's sender task, when its socket closes under a send."""

from __future__ import annotations

import asyncio
import logging

import pytest

from leaderboards.consumers import LeaderboardConsumer


async def finished(error: BaseException) -> asyncio.Task[None]:
    async def send() -> None:
        raise error

    task = asyncio.create_task(send())
    await asyncio.wait([task])
    return task


async def test_a_send_cut_by_the_socket_closing_is_no_fault(
    caplog: pytest.LogCaptureFixture,
) -> None:
    socket = LeaderboardConsumer()
    caplog.set_level(logging.DEBUG, logger="leaderboards.consumers")

    socket._sender_done(await finished(ConnectionResetError("client gone")))
    socket.closed = True
    socket._sender_done(await finished(RuntimeError("websocket.send after websocket.close")))

    assert [record.levelno for record in caplog.records] == [logging.DEBUG, logging.DEBUG]


async def test_any_other_failure_of_a_send_is_logged_as_an_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    socket = LeaderboardConsumer()
    socket.closed = False

    socket._sender_done(await finished(ValueError("a bug")))

    (record,) = caplog.records
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None and record.exc_info[0] is ValueError
