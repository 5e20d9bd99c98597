"""Statements sent to the database together: one round trip for several.

A ranked submission runs a dozen short statements in its transaction. Each
round trip costs the server's process about 70 µs of CPU in Django's and the
driver's handling of it, more than PostgreSQL's work for most of them, and
more under load, where each wait hands the interpreter to another request
(bench/submit.py). The helpers here send several at once:

- `first_rows(statements)`: the first row of each of several reads, in one
  round trip. Each statement still takes its own snapshot, in order, so a
  read after a `FOR UPDATE` sees what committed before the lock was had.
- `writes_together()` with `write(sql, params)`: inside the block, writes
  whose result nobody reads (counters, records, entries) wait, and are sent
  in one round trip before any other statement runs on the connection (so
  every read sees them) and when the block ends, even by an exception (but a
  database error, which breaks the transaction). Only inside a transaction,
  which a failing write rolls back whole; outside one each write runs at once.
- `next_id_reading(model)`: the next id of a table, read with other
  statements, so that the row itself can be inserted among waiting writes.

On PostgreSQL (Django's psycopg cursor binds the parameters on the client,
which allows several statements in one execute) the statements travel
joined by `;` and run in order. The transaction's edges travel with them too:
the first statements of an atomic block carry its `BEGIN`, which the driver
would otherwise send on a round trip of its own, and `writes_together(last=True)`
sends the transaction's last writes with its `COMMIT`. Other databases
(SQLite, the embedded default) take one statement per execute: they run one
by one, in the same order, with the same result.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Model
from psycopg.pq import TransactionStatus

Statement = tuple[str, Sequence[Any]]


_BEGIN: Statement = ("BEGIN", [])
_COMMIT: Statement = ("COMMIT", [])


def _not_begun(connection: BaseDatabaseWrapper) -> bool:
    """Whether the atomic block open on a PostgreSQL `connection` has sent nothing
    yet: the driver would send its `BEGIN` on a round trip of its own (as plain
    as the driver's: no isolation level or read-only mode is set)."""
    driver = connection.connection
    return (
        connection.in_atomic_block
        and not driver.autocommit
        and driver.info.transaction_status == TransactionStatus.IDLE
        and driver.isolation_level is None
        and driver.read_only is None
    )


def _execute_all(
    connection: BaseDatabaseWrapper,
    cursor: Any,
    statements: Sequence[Statement],
    *,
    commit: bool = False,
) -> Iterator[None]:
    """Run the statements in order, pausing after each so that the caller may read its
    rows: joined in one execute on PostgreSQL (stepping through the results), else
    one execute each. On PostgreSQL they carry their transaction's `BEGIN` when
    they are its first, and with `commit` its `COMMIT` (`writes_together`)."""
    if connection.vendor != "postgresql":
        for sql, params in statements:
            cursor.execute(sql, params)
            yield
        return
    driver = connection.connection
    begin = _not_begun(connection)
    sent = [_BEGIN, *statements] if begin else list(statements)
    if commit:
        sent.append(_COMMIT)
    if begin:
        # The statement's own BEGIN opens the transaction: the driver must not send
        # one first. It commits or rolls back when Django says so, as before.
        driver.autocommit = True
    # Each statement is bound by the driver on its own (as one execute would bind it),
    # then the bound texts travel joined: the driver keeps the parsing of a
    # statement for its next use only up to 50 parameters, and parsing the
    # joined text of a submission's writes anew cost 0.7 ms each time.
    driver_cursor = cursor.cursor
    cursor.execute("; ".join(driver_cursor.mogrify(sql, params) for sql, params in sent))
    if commit:
        # Committed: anything after this in the atomic block begins a transaction
        # of its own again, which Django commits at the block's end.
        driver.autocommit = False
    if begin:
        cursor.nextset()
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

    def send(self, *, commit: bool = False) -> None:
        statements, self.statements = self.statements, []
        with self.connection.cursor() as cursor:
            for _ in _execute_all(self.connection, cursor, statements, commit=commit):
                pass


_waiting: weakref.WeakKeyDictionary[BaseDatabaseWrapper, _Waiting] = weakref.WeakKeyDictionary()


def _may_commit(connection: BaseDatabaseWrapper) -> bool:
    """Whether the transaction may commit now: PostgreSQL, in the outermost atomic
    block (no savepoint is open), and not marked to roll back."""
    return (
        connection.vendor == "postgresql"
        and len(connection.atomic_blocks) == 1
        and connection.commit_on_exit
        and not connection.needs_rollback
    )


@contextmanager
def writes_together(*, last: bool = False, using: str = DEFAULT_DB_ALIAS) -> Iterator[None]:
    """Send the block's `write`s together (see the module's docstring); nested, one block.

    With `last`, the block's writes are its transaction's last statements: on
    PostgreSQL, in the outermost atomic block, they go with the transaction's
    `COMMIT` in their round trip, and Django's commit when the atomic block
    ends has nothing left to send (its `on_commit` functions run then, as
    always). Only when this block ends without an exception; a nested block's
    `last` is its outer block's.
    """
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
                waiting.send(commit=last and _may_commit(connection))
    finally:
        del _waiting[connection]


def next_id_reading(model: type[Model], *, using: str = DEFAULT_DB_ALIAS) -> Statement | None:
    """The read of the next id of `model`'s table, from its primary key's sequence, to
    run with other reads (`first_rows`) so that the row can then be inserted with
    that id among waiting writes; None on a database that gives ids only as it
    inserts (SQLite)."""
    if connections[using].vendor != "postgresql":
        return None
    return (
        "SELECT nextval(pg_get_serial_sequence(%s, %s))",
        [model._meta.db_table, model._meta.pk.column],
    )


def write(sql: str, params: Sequence[Any], *, using: str = DEFAULT_DB_ALIAS) -> None:
    """Run a write whose result nobody reads: at once, or with the block's others."""
    connection = connections[using]
    waiting = _waiting.get(connection)
    if waiting is not None:
        waiting.statements.append((sql, params))
        return
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
