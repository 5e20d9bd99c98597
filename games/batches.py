"""The process's writer of streamed actions: the writes of all its sockets, grouped.

A socket acknowledges an action only once it is in the database, so a crash
never loses an acknowledged action. One write per action would be one
transaction per action; here every socket hands its write to the loop's
`StreamWriter`, which writes whatever is waiting in one transaction
(`services.attempts_stream_save`) while the next writes gather. At a human pace
each write holds one action; under load one transaction carries the actions
of hundreds of sockets, and the database sees a bounded number of writes
whatever the number of players.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import ClassVar, Self

from channels.db import database_sync_to_async

from games import services

# Saves written in one transaction at most (the rest wait for the next one).
BATCH_MAX = 500


class StreamWriter:
    """Writes the saves handed to it, grouped; one per event loop (`current()`)."""

    _instances: ClassVar[weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, StreamWriter]] = (
        weakref.WeakKeyDictionary()
    )

    def __init__(self) -> None:
        self._waiting: list[
            tuple[services.StreamedSave, asyncio.Future[services.StreamedSaveResult]]
        ] = []
        self._task: asyncio.Task[None] | None = None
        # Written so far, in saves and transactions (read by bench/stream.py).
        self.saves_written = 0
        self.batches_written = 0

    @classmethod
    def current(cls) -> Self:
        """The writer of the running event loop, created on first use."""
        loop = asyncio.get_running_loop()
        writer = cls._instances.get(loop)
        if writer is None:
            writer = cls._instances[loop] = cls()
        return writer  # type: ignore[return-value]

    async def save(self, save: services.StreamedSave) -> services.StreamedSaveResult:
        """Write `save` with the next group; its result once the transaction committed.

        A failure of the database is raised to every caller of its group. The
        write goes on if the caller is cancelled (its socket closed): what the
        socket accepted is still stored.
        """
        future: asyncio.Future[services.StreamedSaveResult] = (
            asyncio.get_running_loop().create_future()
        )
        self._waiting.append((save, future))
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._write_all())
        return await asyncio.shield(future)

    async def _write_all(self) -> None:
        while self._waiting:
            group, self._waiting = self._waiting[:BATCH_MAX], self._waiting[BATCH_MAX:]
            try:
                results = await database_sync_to_async(services.attempts_stream_save)(
                    saves=[save for save, _ in group]
                )
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
