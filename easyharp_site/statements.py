"""Statements sent to the database together: one round trip for several.

A ranked submission runs a dozen short statements in its transaction. Each
costs a round trip and, in the server's process, about 50 µs of CPU in
Django's and the driver's handling of it (bench/submit_steps.py), more than
PostgreSQL's work for most of them. Two helpers send several at once:

- `first_rows(statements)`: the first row of each of several reads, in one
  round trip. Each statement still takes its own snapshot, in order, so a
  read after a `FOR UPDATE` sees what committed before the lock was had.
- `writes_together()` with `write(sql, params)`: inside the block, writes
  whose result nobody reads (counters, records, entries) wait, and are sent
  in one round trip before any other statement runs on the connection (so
  every read sees them) and when the block ends, even by an exception (but a
  database error, which breaks the transaction). Only inside a transaction,
  which a failing write rolls back whole; outside one each write runs at once.

On PostgreSQL (Django's psycopg cursor binds the parameters on the client,
which allows several statements in one execute) the statements travel
joined by `;` and run in order. Other databases (SQLite, the embedded
default) take one statement per execute: they run one by one, in the same
order, with the same result.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.backends.base.base import BaseDatabaseWrapper

Statement = tuple[str, Sequence[Any]]


def _execute_all(
    connection: BaseDatabaseWrapper, cursor: Any, statements: Sequence[Statement]
) -> Iterator[None]:
    """Run the statements in order, pausing after each so that the caller may read its
    rows: joined in one execute on PostgreSQL (stepping through the results), else
    one execute each."""
    if connection.vendor != "postgresql":
        for sql, params in statements:
            cursor.execute(sql, params)
            yield
        return
    cursor.execute(
        "; ".join(sql for sql, _ in statements),
        [value for _, params in statements for value in params],
    )
    yield
    for _ in statements[1:]:
        cursor.nextset()
        yield


def first_rows(statements: Sequence[Statement], *, using: str = DEFAULT_DB_ALIAS) -> list[Any]:
    """The first row (or None) of each statement, run in order; one round trip on PostgreSQL.

    Every statement returns rows (a `SELECT`, or a write with `RETURNING`)."""
    connection = connections[using]
    with connection.cursor() as cursor:
        return [cursor.fetchone() for _ in _execute_all(connection, cursor, statements)]


class _Waiting:
    """The writes waiting on one connection; an execute wrapper that sends them first."""

    def __init__(self, connection: BaseDatabaseWrapper) -> None:
        self.connection = connection
        self.statements: list[Statement] = []

    def __call__(
        self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any
    ) -> Any:
        if self.statements:
            self.send()
        return execute(sql, params, many, context)

    def send(self) -> None:
        statements, self.statements = self.statements, []
        with self.connection.cursor() as cursor:
            for _ in _execute_all(self.connection, cursor, statements):
                pass


_waiting: weakref.WeakKeyDictionary[BaseDatabaseWrapper, _Waiting] = weakref.WeakKeyDictionary()


@contextmanager
def writes_together(*, using: str = DEFAULT_DB_ALIAS) -> Iterator[None]:
    """Send the block's `write`s together (see the module's docstring); nested, one block."""
    connection = connections[using]
    if connection in _waiting or not connection.in_atomic_block:
        # Nested, or outside a transaction (each write commits on its own): at once.
        yield
        return
    waiting = _waiting[connection] = _Waiting(connection)
    try:
        with connection.execute_wrapper(waiting):
            try:
                yield
            except DatabaseError:
                # The transaction is broken: it rolls back, with what waits.
                raise
            except BaseException:
                # Stored as if each write had run when it was made: the transaction
                # may go on, the exception caught.
                if waiting.statements:
                    waiting.send()
                raise
            if waiting.statements:
                waiting.send()
    finally:
        del _waiting[connection]


def write(sql: str, params: Sequence[Any], *, using: str = DEFAULT_DB_ALIAS) -> None:
    """Run a write whose result nobody reads: at once, or with the block's others."""
    connection = connections[using]
    waiting = _waiting.get(connection)
    if waiting is not None:
        waiting.statements.append((sql, params))
        return
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
