"""Writes that outlive their socket, finished before the server process stops.

When a server process is told to stop (SIGTERM, a rolling restart), uvicorn
closes every open socket at once with 1012, "service restart", and the pages
connect again after a random wait, to another process. A socket's write of
the actions it accepted goes on after its socket closed (so that what a page
sent is stored even if its acknowledgement never reached it), but nothing of
the server waits for it: the sockets register those writes here
(`write_outliving_socket`) and the server's lifespan waits for them
(`writes_finish`) before it closes the event loop's database pool.

An action is acknowledged only once stored, so none acknowledged is lost
either way; this keeps the accepted ones whose acknowledgement was on its way.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

# The writes under way, per event loop (a server process has one).
_writes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, set[asyncio.Task[Any]]] = (
    weakref.WeakKeyDictionary()
)


def write_outliving_socket(task: asyncio.Task[Any]) -> None:
    """Have the server wait for `task` (a socket's write) before it stops."""
    writes = _writes.setdefault(task.get_loop(), set())
    writes.add(task)
    task.add_done_callback(writes.discard)


def writes_under_way() -> int:
    """The number of the running loop's registered writes not finished yet."""
    return len(_writes.get(asyncio.get_running_loop(), ()))


async def writes_finish(timeout: float) -> int:
    """Wait up to `timeout` seconds for the running loop's registered writes; the number
    of writes still under way then (0 when all finished)."""
    loop = asyncio.get_running_loop()
    writes = _writes.get(loop, set())
    deadline = loop.time() + timeout
    # A write may register another before it ends (a socket writes one group at a time).
    while writes and loop.time() < deadline:
        await asyncio.wait(set(writes), timeout=deadline - loop.time())
    return len(writes)
