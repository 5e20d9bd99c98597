"""A streamed write given as its statements, run in one transaction: on Django's
connection (`steps_run`, in the database's thread) or on a connection of the
running event loop's pool (`steps_run_on_loop`, `easyharp_site.loop_pool`).

The sockets' writes of streamed actions (`games.services.attempts_stream_save`,
`races.services.races_actions_save`) are generators: each yields a statement as
`(sql, parameters, many)`, gets back the rows it read (none for `many`, an
`executemany` of one statement over a list of parameters), and returns its
results. Written once, they run the same way on either connection, so attempts
and races take one path: the loop's pool where a server opened one, Django's
connection everywhere else (the embedded SQLite, tests, scripts).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any, TypeVar

from django.db import connection, transaction

from easyharp_site import loop_pool

Result = TypeVar("Result")

# One statement: its SQL, its parameters (a list of them, one per row, when `many`).
Step = tuple[str, Sequence[Any], bool]
Steps = Generator[Step, list[tuple[Any, ...]], Result]


def steps_lock() -> bool:
    """Whether the statements may take row locks (`FOR UPDATE`): not on SQLite, whose
    writes take the whole database."""
    return bool(connection.features.has_select_for_update)


def steps_run(steps: Steps[Result]) -> Result:
    """Run `steps` in one transaction on Django's connection; their result."""
    with transaction.atomic(), connection.cursor() as cursor:
        try:
            sql, params, many = next(steps)
            while True:
                if many:
                    cursor.executemany(sql, params)
                    sql, params, many = steps.send([])
                else:
                    cursor.execute(sql, params)
                    sql, params, many = steps.send(cursor.fetchall())
        except StopIteration as done:
            result: Result = done.value
            return result


async def steps_run_on_loop(steps: Steps[Result]) -> Result:
    """Run `steps` in one transaction on a connection of the running loop's pool (open:
    `loop_pool.available()`; PostgreSQL only); their result. No thread: the loop
    goes on as soon as each answer comes."""
    async with loop_pool.transaction() as cursor:
        try:
            sql, params, many = next(steps)
            while True:
                if many:
                    await cursor.executemany(sql, params)
                    sql, params, many = steps.send([])
                else:
                    await cursor.execute(sql, params)
                    sql, params, many = steps.send(await cursor.fetchall())
        except StopIteration as done:
            result: Result = done.value
            return result
