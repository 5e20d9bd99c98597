"""A bounded pool of processes for the heavy work of requests (hints, replays).

The solver and a long replay cost seconds of CPU. Run in the server process,
they held its one interpreter lock, so every other request waited behind
them (docs/RELIABILITY.md). Here they run in
`HEAVY_WORK_PROCESSES` processes of their own, at a lower CPU priority
(`HEAVY_WORK_NICENESS`), started once per server process and kept.

At most `HEAVY_WORK_QUEUE` jobs wait for them; one more is refused at once
with a 503 `busy` and `Retry-After`, rather than left to wait behind work it
cannot see the end of. A request waiting for its result holds no database
connection (`connection_release`).
"""

from __future__ import annotations

import atexit
import concurrent.futures
import logging
import multiprocessing
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.db import connection
from rest_framework import status

from easyharp_site.errors import ServiceError
from easyharp_site.fairness import turn_lent
from games.work import process_start

logger = logging.getLogger(__name__)

T = TypeVar("T")

_lock = threading.Lock()
_pool: concurrent.futures.ProcessPoolExecutor | None = None
_taken = 0


def _reset_after_fork() -> None:
    global _lock, _pool, _taken
    _lock, _pool, _taken = threading.Lock(), None, 0


# A server process forked from another (uvicorn --workers) starts a pool of its own.
os.register_at_fork(after_in_child=_reset_after_fork)


def _executor() -> concurrent.futures.ProcessPoolExecutor:
    global _pool
    if _pool is None:
        _pool = concurrent.futures.ProcessPoolExecutor(
            max_workers=settings.HEAVY_WORK_PROCESSES,
            # Not forked: the server process has threads (and their locks) mid-flight.
            mp_context=multiprocessing.get_context("spawn"),
            initializer=process_start,
            initargs=(settings.HEAVY_WORK_NICENESS,),
        )
    return _pool


@atexit.register
def _shut_down() -> None:
    if _pool is not None:
        _pool.shutdown(wait=False, cancel_futures=True)


def connection_release() -> None:
    """Give this thread's database connection back (to the pool, or closed) before a
    long wait; the next query opens one again. Not inside a transaction, whose
    connection must stay."""
    if not connection.in_atomic_block:
        connection.close()


def heavy_submit(function: Callable[..., T], /, **arguments: Any) -> concurrent.futures.Future[T]:
    """Queue `function(**arguments)` in the pool; its future.

    Raises a 503 `busy` (with `Retry-After`) when HEAVY_WORK_PROCESSES jobs run
    and HEAVY_WORK_QUEUE more wait already.
    """
    global _taken
    with _lock:
        if _taken >= settings.HEAVY_WORK_PROCESSES + settings.HEAVY_WORK_QUEUE:
            logger.warning("heavy work pool full (%s jobs); refused %s", _taken, function.__name__)
            raise _busy("The server is busy with other hints and replays.")
        _taken += 1
        try:
            future = _executor().submit(function, **arguments)
        except BaseException:
            _taken -= 1
            raise
    future.add_done_callback(_give_back)
    return future


def _give_back(future: concurrent.futures.Future[Any]) -> None:
    global _taken
    with _lock:
        _taken -= 1


def _busy(message: str) -> ServiceError:
    """The 503 a request gets when the pool cannot do its work now."""
    return ServiceError(
        "busy",
        f"{message} Please try again in a few seconds.",
        status_code=status.HTTP_503_SERVICE_UNAVAILABLE,
        retry_after=settings.HEAVY_WORK_RETRY_AFTER,
        wait=settings.HEAVY_WORK_RETRY_AFTER,
    )


def heavy_wait(future: concurrent.futures.Future[T]) -> T:
    """The result of a job of the pool, waited for without a database connection
    and at most HEAVY_WORK_TIMEOUT seconds; a 503 `busy` when it did not come."""
    global _pool
    connection_release()
    try:
        # Waiting costs this process nothing: the address's next request runs meanwhile.
        with turn_lent():
            return future.result(timeout=settings.HEAVY_WORK_TIMEOUT)
    except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError):
        # Bounded: a request never waits for ever on work that does not end.
        future.cancel()
        logger.error("heavy work not done within %s s", settings.HEAVY_WORK_TIMEOUT)
        raise _busy("The server could not finish this work in time.") from None
    except concurrent.futures.process.BrokenProcessPool:
        # A pool process died (killed, out of memory): the next job starts a new pool.
        with _lock:
            _pool = None
        logger.exception("a heavy work process died")
        raise _busy("The server could not finish this work.") from None


def heavy_run(function: Callable[..., T], /, **arguments: Any) -> T:
    """`function(**arguments)` run in the pool, waited for without a database connection."""
    return heavy_wait(heavy_submit(function, **arguments))
