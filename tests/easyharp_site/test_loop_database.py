"""The event loop's own PostgreSQL connection (easyharp_site.loop_database): one
transaction at a time, committed or rolled back whole, and made again after the
server ended its session."""

from __future__ import annotations

import asyncio

import psycopg
import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import Group

from easyharp_site import loop_database
from tests.fixtures import end_loop_sessions

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


async def group_names() -> set[str]:
    return set(await database_sync_to_async(list)(Group.objects.values_list("name", flat=True)))


async def add_group(name: str) -> None:
    async with loop_database.transaction() as cursor:
        await cursor.execute("INSERT INTO auth_group (name) VALUES (%s)", [name])


def test_it_is_there_on_postgresql() -> None:
    assert loop_database.available()


async def test_a_transaction_commits_when_its_block_ends() -> None:
    await add_group("committed")
    assert await group_names() == {"committed"}


async def test_a_block_that_raises_writes_nothing() -> None:
    with pytest.raises(ZeroDivisionError):
        async with loop_database.transaction() as cursor:
            await cursor.execute("INSERT INTO auth_group (name) VALUES (%s)", ["undone"])
            1 / 0  # noqa: B018
    assert await group_names() == set()
    await add_group("after")  # the connection is still good
    assert await group_names() == {"after"}


async def test_transactions_of_one_loop_take_turns() -> None:
    # Each reads the count and writes the next name: were two on the connection at
    # once, they would read the same count and the second insert would break.
    async def next_group() -> None:
        async with loop_database.transaction() as cursor:
            await cursor.execute("SELECT count(*) FROM auth_group")
            (count,) = await cursor.fetchone()
            await asyncio.sleep(0.01)
            await cursor.execute("INSERT INTO auth_group (name) VALUES (%s)", [f"g{count}"])

    await asyncio.gather(*(next_group() for _ in range(5)))
    assert await group_names() == {f"g{n}" for n in range(5)}


async def test_after_the_server_ended_its_session_one_write_fails_and_the_next_connects() -> None:
    await add_group("before")
    assert await database_sync_to_async(end_loop_sessions)() == 1
    with pytest.raises(psycopg.OperationalError):
        await add_group("lost")
    await add_group("again")
    assert await group_names() == {"before", "again"}
