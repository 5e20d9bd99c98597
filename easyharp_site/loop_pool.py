"""PostgreSQL connections of the server's event loop, for the sockets' streamed writes.

Django runs the database in a thread (`database_sync_to_async`). Under a busy
loop that thread waits for the interpreter lock after each round trip, and a
streamed action's acknowledgement waited seconds for it
(docs/PERFORMANCE.md). `transaction()` runs one on an asynchronous
connection that the loop resumes as soon as each answer comes.

The connections come from a `psycopg_pool.AsyncConnectionPool` of the server's
event loop, opened and closed by the server's lifespan (`easyharp_site.lifespan`),
made from Django's settings of the database (the same database, user and options) with
`LOOP_POOL_MAX_SIZE` connections at most, a wait of `LOOP_POOL_TIMEOUT`
seconds for one, a connect timeout and a statement timeout
(`LOOP_POOL_STATEMENT_TIMEOUT_MS`). A connection that broke (a restart of
the database) fails its transaction, whose sockets close with 4503 and send
again; the pool drops it and connects anew. It is not checked before each
use: that would be a round trip more per write. `/healthz/?details=1` shows each pool
of the process (`pools_report`). Where no pool is open (the embedded SQLite,
a test, a server run without lifespan events) `available()` is False and
callers use Django's connection in a thread.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from psycopg_pool import AsyncConnectionPool

# The sessions' name in pg_stat_activity.
APPLICATION_NAME = "easyharp loop"

_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncConnectionPool] = (
    weakref.WeakKeyDictionary()
)


def available() -> bool:
    """Whether the running event loop has its pool open (a server's, from its lifespan):
    else its writes go through Django's connection in a thread."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    return loop in _pools


def _connection_kwargs(using: str) -> dict[str, Any]:
    params = connections[using].get_connection_params()
    params.pop("cursor_factory", None)  # Django's is a sync cursor
    params.pop("pool", None)
    params["application_name"] = APPLICATION_NAME
    params["connect_timeout"] = settings.LOOP_POOL_CONNECT_TIMEOUT
    timeout = f"-c statement_timeout={settings.LOOP_POOL_STATEMENT_TIMEOUT_MS}"
    params["options"] = f"{params.get('options', '')} {timeout}".strip()
    params["autocommit"] = True
    return params


async def open_pool(using: str = DEFAULT_DB_ALIAS) -> bool:
    """Open the running loop's pool (a server's lifespan startup; it connects in the
    background, so a database that is not up yet delays nothing); whether there is
    one now (PostgreSQL only)."""
    if connections[using].vendor != "postgresql":
        return False
    loop = asyncio.get_running_loop()
    if loop not in _pools:
        pool = AsyncConnectionPool(
            kwargs=_connection_kwargs(using),
            min_size=1,
            max_size=settings.LOOP_POOL_MAX_SIZE,
            timeout=settings.LOOP_POOL_TIMEOUT,
            name=f"loop-{os.getpid()}-{id(loop):x}",
            open=False,
        )
        await pool.open(wait=False)
        _pools[loop] = pool
    return True


@asynccontextmanager
async def transaction() -> AsyncIterator[psycopg.AsyncCursor[Any]]:
    """A cursor in a transaction on a connection of the running loop's pool (open:
    `available()`); committed when the block ends, rolled back if it raises. A
    connection that broke fails its transaction; the pool's other idle ones are
    checked then, so that one restart of the database fails one write."""
    pool = _pools[asyncio.get_running_loop()]
    try:
        async with (
            pool.connection() as connection,
            connection.transaction(),
            connection.cursor() as cursor,
        ):
            yield cursor
    except psycopg.OperationalError:
        await pool.check()
        raise


def pools_report() -> list[dict[str, Any]]:
    """Each event loop's pool of this process: its size, its idle connections, the
    requests waiting for one, and its counters (psycopg_pool's `get_stats`)."""
    return [{"name": pool.name, **pool.get_stats()} for pool in list(_pools.values())]


async def close() -> None:
    """Close the running loop's pool (a server's shutdown; a test's end). A pool must be
    closed on its loop before the loop ends: its workers outlive a cancellation."""
    pool = _pools.pop(asyncio.get_running_loop(), None)
    if pool is not None:
        await pool.close()
