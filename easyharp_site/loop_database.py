"""A PostgreSQL connection on the server's event loop, for the writes of the sockets'
hot path.

Django runs the database in a thread (`database_sync_to_async`). After each
round trip that thread waits for the interpreter lock, up to its switch
interval (5 ms) each time while the loop runs thousands of sockets: a
transaction of 2.5 ms took 15 to 35 ms there at the median
(docs/PERFORMANCE.md, "Streamed ranked attempts"). `transaction()` runs one on
an asynchronous psycopg connection of the running loop instead, which the loop
resumes as soon as each answer comes.

One connection per event loop, made on first use from Django's settings of the
database (the same database, user and adapters), and one transaction at a time
on it. A connection that failed is dropped, and the next transaction makes a
new one. PostgreSQL only: on another database (the embedded SQLite)
`available()` is False and callers use Django's connection in a thread.
"""

from __future__ import annotations

import asyncio
import functools
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
from django.db import DEFAULT_DB_ALIAS, connections

# The sessions' name in pg_stat_activity.
APPLICATION_NAME = "easyharp loop"


@functools.cache
def available(using: str = DEFAULT_DB_ALIAS) -> bool:
    """Whether `transaction()` can run on this database (asked once: per write it would
    cost a look-up of the task's database connection)."""
    return connections[using].vendor == "postgresql"


class _LoopConnection:
    """The connection of one event loop, and the lock that gives it to one transaction."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.connection: psycopg.AsyncConnection | None = None

    async def open(self, using: str) -> psycopg.AsyncConnection:
        if self.connection is None or self.connection.closed or self.connection.broken:
            self.close()
            params = connections[using].get_connection_params()
            params.pop("cursor_factory", None)  # Django's is a sync cursor
            params["application_name"] = APPLICATION_NAME
            self.connection = await psycopg.AsyncConnection.connect(**params, autocommit=True)
        return self.connection

    def close(self) -> None:
        """Close the connection at once (libpq's finish needs no loop)."""
        if self.connection is not None:
            self.connection.pgconn.finish()
            self.connection = None


_connections: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopConnection] = (
    weakref.WeakKeyDictionary()
)


@asynccontextmanager
async def transaction(using: str = DEFAULT_DB_ALIAS) -> AsyncIterator[psycopg.AsyncCursor]:
    """A cursor in a transaction of the running loop's connection; committed when the
    block ends, rolled back if it raises. A connection that failed is dropped."""
    holder = _connections.setdefault(asyncio.get_running_loop(), _LoopConnection())
    async with holder.lock:
        connection = await holder.open(using)
        try:
            async with connection.transaction(), connection.cursor() as cursor:
                yield cursor
        except (psycopg.OperationalError, psycopg.InterfaceError):
            holder.close()
            raise


def close_all() -> None:
    """Close every loop's connection (a test's end, before its database goes)."""
    for holder in list(_connections.values()):
        holder.close()
