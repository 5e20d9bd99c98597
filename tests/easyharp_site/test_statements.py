"""Statements sent together: the same results as one by one, in fewer round trips."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext

from easyharp_site.statements import first_rows, write, writes_together

pytestmark = pytest.mark.django_db


@pytest.fixture
def counters():
    """A table of named counters of this test's own."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE statements_counter (name VARCHAR(8) PRIMARY KEY, n INTEGER)")
    yield
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE statements_counter")


def _counts() -> dict[str, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name, n FROM statements_counter ORDER BY name")
        return dict(cursor.fetchall())


def _add(name: str, n: int) -> None:
    write("INSERT INTO statements_counter (name, n) VALUES (%s, %s)", [name, n])


def _round_trips() -> int:
    """Round trips for three statements sent together: one on PostgreSQL, else three."""
    return 1 if connection.vendor == "postgresql" else 3


def test_first_rows_gives_each_statements_first_row_in_order_each_seeing_the_last(counters):
    _add("a", 1)
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        rows = first_rows(
            [
                ("SELECT n FROM statements_counter WHERE name = %s", ["a"]),
                ("UPDATE statements_counter SET n = n + %s WHERE name = %s RETURNING n", [4, "a"]),
                ("SELECT n FROM statements_counter WHERE name = %s", ["a"]),
                ("SELECT n FROM statements_counter WHERE name = %s", ["nobody"]),
            ]
        )
    assert rows == [(1,), (5,), (5,), None]
    assert len(queries) == (1 if connection.vendor == "postgresql" else 4)
    # Values with a statement's own punctuation in them stay values.
    (row,) = first_rows([("SELECT %s", ["x'; DROP TABLE statements_counter; --"])])
    assert row == ("x'; DROP TABLE statements_counter; --",)
    assert _counts() == {"a": 5}


def test_writes_wait_for_the_blocks_end_and_go_in_one_round_trip(counters):
    with transaction.atomic():
        with CaptureQueriesContext(connection) as queries, writes_together():
            _add("a", 1)
            _add("b", 2)
            _add("c", 3)
            assert len(queries) == 0, "nothing is sent before the block ends"
        assert len(queries) == _round_trips()
        assert _counts() == {"a": 1, "b": 2, "c": 3}


def test_a_read_inside_the_block_sends_the_waiting_writes_first(counters):
    with transaction.atomic(), writes_together():
        _add("a", 1)
        assert _counts() == {"a": 1}
        _add("b", 2)
        with writes_together():  # nested: the same block
            _add("c", 3)
        assert _counts() == {"a": 1, "b": 2, "c": 3}


def test_a_failing_write_fails_the_block_and_its_transaction_stores_nothing(counters):
    _add("a", 1)
    with pytest.raises(DatabaseError), transaction.atomic(), writes_together():
        _add("b", 2)
        _add("a", 9)  # the name is taken
    assert _counts() == {"a": 1}


def test_writes_made_before_an_exception_are_stored_when_the_transaction_goes_on(counters):
    with transaction.atomic():
        with pytest.raises(ValueError), writes_together():
            _add("a", 1)
            raise ValueError("caught inside the transaction")
        _add("b", 2)
    assert _counts() == {"a": 1, "b": 2}


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_each_write_runs_at_once(counters):
    with writes_together(), CaptureQueriesContext(connection) as queries:
        _add("a", 1)
        assert len(queries) == 1
        _add("b", 2)
    assert _counts() == {"a": 1, "b": 2}


# --- The transaction's edges travel with the statements (PostgreSQL) ------------------


def _other_session() -> Any:
    """A session of its own on the test database (Django's connection settings),
    autocommitting: it sees only what has committed."""
    import psycopg

    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    return psycopg.connect(**params, autocommit=True)


def _locked_elsewhere(name: str) -> bool:
    """Whether another session finds the counter's row locked (by a transaction of ours)."""
    from psycopg.errors import LockNotAvailable

    with _other_session() as other:
        try:
            other.execute(
                "SELECT 1 FROM statements_counter WHERE name = %s FOR UPDATE NOWAIT", [name]
            )
        except LockNotAvailable:
            return True
        return False


def _stored_elsewhere() -> dict[str, int]:
    """The counters as another session sees them: what has committed."""
    with _other_session() as other:
        return dict(other.execute("SELECT name, n FROM statements_counter").fetchall())


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_first_reads_of_a_transaction_carry_its_begin(counters, driver_commands):
    _add("a", 1)
    driver_commands.clear()
    with pytest.raises(ValueError), transaction.atomic():
        (row,) = first_rows(
            [("UPDATE statements_counter SET n = n + 1 WHERE name = %s RETURNING n", ["a"])]
        )
        assert row == (2,)
        assert driver_commands == [], "no BEGIN of the driver's own"
        # In a transaction: the row stays locked until it ends.
        assert _locked_elsewhere("a")
        _add("b", 2)
        raise ValueError("rolls the transaction back")
    assert driver_commands == [b"ROLLBACK"]
    assert _counts() == {"a": 1}
    assert not _locked_elsewhere("a")

    driver_commands.clear()
    with transaction.atomic():
        first_rows([("UPDATE statements_counter SET n = 5 WHERE name = %s RETURNING n", ["a"])])
        _add("b", 2)
    assert driver_commands == [b"COMMIT"]
    assert _stored_elsewhere() == {"a": 5, "b": 2}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_last_writes_of_a_transaction_carry_its_commit(counters, driver_commands):
    committed: list[dict[str, int]] = []
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        first_rows([("SELECT count(*) FROM statements_counter", [])])
        with writes_together(last=True):
            _add("a", 1)
            _add("b", 2)
        transaction.on_commit(lambda: committed.append(_counts()))
        # Stored already, before the atomic block ends: the COMMIT went with them.
        assert _stored_elsewhere() == {"a": 1, "b": 2}
        assert not committed, "on_commit functions still run when the block ends"
    assert driver_commands == [], "neither BEGIN nor COMMIT on a round trip of its own"
    assert len(queries) == 2
    assert committed == [{"a": 1, "b": 2}]

    # Anything after them in the block is a transaction of its own, committed at the end.
    with transaction.atomic():
        with writes_together(last=True):
            _add("c", 3)
        _add("d", 4)
        assert _stored_elsewhere() == {"a": 1, "b": 2, "c": 3}
    assert _stored_elsewhere() == {"a": 1, "b": 2, "c": 3, "d": 4}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_last_writes_that_fail_store_nothing(counters):
    _add("a", 1)
    with pytest.raises(DatabaseError), transaction.atomic():
        first_rows([("UPDATE statements_counter SET n = 7 WHERE name = %s RETURNING n", ["a"])])
        with writes_together(last=True):
            _add("b", 2)
            _add("a", 9)  # the name is taken
    assert _stored_elsewhere() == {"a": 1}
    # The connection goes on as before.
    with transaction.atomic(), writes_together(last=True):
        _add("b", 2)
    assert _stored_elsewhere() == {"a": 1, "b": 2}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_last_writes_inside_a_savepoint_wait_for_the_outer_commit(counters):
    with transaction.atomic():
        with transaction.atomic(), writes_together(last=True):
            _add("a", 1)
        assert _stored_elsewhere() == {}
    assert _stored_elsewhere() == {"a": 1}


def test_last_writes_outside_postgresql_or_in_a_test_transaction_commit_as_usual(counters):
    # The test's own transaction is around this block: the writes wait for it.
    with transaction.atomic(), writes_together(last=True):
        _add("a", 1)
    assert _counts() == {"a": 1}
    assert connection.in_atomic_block
