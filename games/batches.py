"""The process's writers of streamed actions: the writes of all its sockets, grouped.

A socket acknowledges an action only once it is in the database, so a crash
never loses an acknowledged action. One write per action would be one
transaction per action; here every socket hands its write to the loop's
`StreamWriter`, which writes whatever is waiting in one transaction while the
next writes gather: in a server on PostgreSQL on a connection of the loop's
own pool (`services.attempts_stream_save_on_loop`, `easyharp_site.loop_pool`),
else in a thread (`services.attempts_stream_save`). At a human pace
each write holds one action; under load one transaction carries the actions
of hundreds of sockets, and the database sees a bounded number of writes
whatever the number of players. A race's sockets (`races.consumers`) group their
writes the same way, on the same connections, with a writer of their own write
functions (`StreamWriter.choose`).
"""

from __future__ import annotations

import asyncio
import inspect
import weakref
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from channels.db import database_sync_to_async

from easyharp_site import loop_pool
from games import services

Save = TypeVar("Save")
Result = TypeVar("Result")

# Saves written in one transaction at most (the rest wait for the next one).
BATCH_MAX = 500


class StreamWriter(Generic[Save, Result]):
    """Writes the saves handed to it with `write` (one transaction for a group: a list
    of saves in, one result per save out), grouped; one per event loop and write
    function (`current()`, or `of(write)`)."""

    _instances: ClassVar[
        weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Any, StreamWriter[Any, Any]]]
    ] = weakref.WeakKeyDictionary()

    def __init__(self, write: Callable[..., Any]) -> None:
        # A coroutine function runs on the loop; another in a thread, as Django's ORM needs.
        self._write = write if inspect.iscoroutinefunction(write) else database_sync_to_async(write)
        self._waiting: list[tuple[Save, asyncio.Future[Result]]] = []
        self._task: asyncio.Task[None] | None = None
        # Written so far, in saves and transactions (read by bench/stream.py).
        self.saves_written = 0
        self.batches_written = 0

    @staticmethod
    def of(write: Callable[..., Any]) -> StreamWriter[Any, Any]:
        """The running event loop's writer of `write(saves=[...])` (a function, or a
        coroutine function: its result is the list of results), created on first use."""
        writers = StreamWriter._instances.setdefault(asyncio.get_running_loop(), {})
        writer = writers.get(write)
        if writer is None:
            writer = writers[write] = StreamWriter(write)
        return writer

    @staticmethod
    def choose(
        *, on_loop: Callable[..., Any], in_thread: Callable[..., Any]
    ) -> StreamWriter[Any, Any]:
        """The running event loop's writer of `on_loop` (a coroutine function writing on
        the loop's own connections) where its pool is open (`easyharp_site.loop_pool`),
        else of `in_thread` (the same write on Django's connection)."""
        return StreamWriter.of(on_loop if loop_pool.available() else in_thread)

    @staticmethod
    def current() -> StreamWriter[Any, services.StreamedSaveResult]:
        """The running event loop's writer of streamed ranked attempts."""
        return StreamWriter.choose(
            on_loop=services.attempts_stream_save_on_loop, in_thread=services.attempts_stream_save
        )

    async def save(self, save: Save) -> Result:
        """Write `save` with the next group; its result once the transaction committed.

        A failure of the database is raised to every caller of its group. The
        write goes on if the caller is cancelled (its socket closed): what the
        socket accepted is still stored.
        """
        future: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        self._waiting.append((save, future))
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._write_all())
        return await asyncio.shield(future)

    async def _write_all(self) -> None:
        while self._waiting:
            group, self._waiting = self._waiting[:BATCH_MAX], self._waiting[BATCH_MAX:]
            try:
                saves: Sequence[Save] = [save for save, _ in group]
                results = await self._write(saves=saves)
            except Exception as error:  # every caller hears of it, and may try again
                for _, future in group:
                    if not future.done():
                        future.set_exception(error)
                continue
            self.saves_written += len(group)
            self.batches_written += 1
            for (_, future), result in zip(group, results, strict=True):
                if not future.done():
                    future.set_result(result)
