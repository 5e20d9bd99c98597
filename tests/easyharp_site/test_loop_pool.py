"""The event loop's own PostgreSQL connections (easyharp_site.loop_pool): a transaction
committed or rolled back whole, the pool's settings from Django's, a session the
server ended failing one write only, and the pool in the health check."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import Group
from django.test import Client

from easyharp_site import loop_pool
from tests.fixtures import end_loop_sessions

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
async def pool() -> AsyncIterator[None]:
    """The test loop's pool, opened as a server's lifespan opens it, closed after."""
    assert await loop_pool.open_pool()
    yield
    await loop_pool.close()


async def reopened() -> None:
    """The pool made again from the settings as they are now."""
    await loop_pool.close()
    assert await loop_pool.open_pool()


async def group_names() -> set[str]:
    return set(await database_sync_to_async(list)(Group.objects.values_list("name", flat=True)))


async def add_group(name: str) -> None:
    async with loop_pool.transaction() as cursor:
        await cursor.execute("INSERT INTO auth_group (name) VALUES (%s)", [name])


async def test_it_is_there_on_postgresql() -> None:
    assert loop_pool.available()


async def test_a_transaction_commits_when_its_block_ends() -> None:
    await add_group("committed")
    assert await group_names() == {"committed"}


async def test_a_block_that_raises_writes_nothing() -> None:
    with pytest.raises(ZeroDivisionError):
        async with loop_pool.transaction() as cursor:
            await cursor.execute("INSERT INTO auth_group (name) VALUES (%s)", ["undone"])
            1 / 0  # noqa: B018
    assert await group_names() == set()
    await add_group("after")  # the pool still serves
    assert await group_names() == {"after"}


async def test_the_connections_take_djangos_settings_and_the_timeouts(settings: Any) -> None:
    settings.LOOP_POOL_STATEMENT_TIMEOUT_MS = 1234
    await reopened()
    async with loop_pool.transaction() as cursor:
        await cursor.execute("SHOW statement_timeout")
        (timeout,) = await cursor.fetchone()
        await cursor.execute("SELECT current_database(), current_setting('application_name')")
        database, name = await cursor.fetchone()
    assert timeout == "1234ms"
    assert database == (await database_sync_to_async(_django_database)())
    assert name == loop_pool.APPLICATION_NAME


def _django_database() -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT current_database()")
        return str(cursor.fetchone()[0])


async def test_a_statement_past_its_timeout_is_cancelled(settings: Any) -> None:
    settings.LOOP_POOL_STATEMENT_TIMEOUT_MS = 50
    await reopened()
    with pytest.raises(psycopg.errors.QueryCanceled):
        async with loop_pool.transaction() as cursor:
            await cursor.execute("SELECT pg_sleep(1)")


async def test_after_the_server_ended_its_session_one_write_fails_and_the_next_connects() -> None:
    await add_group("before")
    assert await database_sync_to_async(end_loop_sessions)() >= 1
    with pytest.raises(psycopg.OperationalError):
        await add_group("lost")
    await add_group("again")
    assert await group_names() == {"before", "again"}


async def test_the_health_check_shows_the_pool_of_the_process() -> None:
    await add_group("warm")
    answer = await database_sync_to_async(Client().get)("/healthz/?details=1")
    (pool,) = answer.json()["loop_pools"]
    assert pool["pool_max"] >= 1 and pool["pool_size"] >= 1
    assert pool["requests_num"] >= 1
