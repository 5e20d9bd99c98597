"""A bounded pool of processes for the heavy work of requests (hints, replays),
shared fairly between client addresses and players.

The solver and a long replay cost seconds of CPU. Run in the server process,
they held its one interpreter lock, so every other request waited behind
them (docs/RELIABILITY.md). Here they run in
`HEAVY_WORK_PROCESSES` processes of their own, at a lower CPU priority
(`HEAVY_WORK_NICENESS`), started once per server process and kept.

Jobs wait their turn in one line per client address, and a free process takes
the next job of the address served longest ago (a new address first): a
flood from one address, however many accounts it uses, holds a process at a
time, and anybody from another address has the next one. A player has at most
one job running or waiting, an address `HEAVY_WORK_PER_ADDRESS`, and at most
`HEAVY_WORK_QUEUE` jobs wait in all; one more is refused at once with a 503
`busy` and `Retry-After`, rather than left to wait behind work it cannot see
the end of. A request waiting for its result holds no database connection
(`connection_release`).
"""

from __future__ import annotations

import atexit
import concurrent.futures
import functools
import itertools
import logging
import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.conf import settings
from django.db import connection
from django.http import HttpRequest
from rest_framework import status
from rest_framework.request import Request

from easyharp_site.errors import ServiceError
from easyharp_site.fairness import turn_lent
from easyharp_site.throttling import client_address
from games.work import process_start

logger = logging.getLogger(__name__)

T = TypeVar("T")
K = TypeVar("K")


@dataclass(frozen=True)
class Requester:
    """Whom a job is for: the client address (as the limits count it) and the player
    signed in, if any."""

    address: str
    player: int | None = None

    @classmethod
    def of(cls, request: HttpRequest | Request) -> Requester:
        user = getattr(request, "user", None)
        player = user.pk if user is not None and user.is_authenticated else None
        return cls(address=client_address(request), player=player)


# Work the server asks for itself (tests, benches): one line of its own.
SERVER = Requester(address="server")


@dataclass(eq=False)
class _Job:
    function: Callable[..., Any]
    arguments: dict[str, Any]
    requester: Requester
    future: concurrent.futures.Future[Any] = field(default_factory=concurrent.futures.Future)


# Reentrant: a job's future may finish, and start the next job, in the thread
# that holds it.
_lock = threading.RLock()
_pool: concurrent.futures.ProcessPoolExecutor | None = None
_running = 0
# The jobs waiting, one line per address; and per address and player, the jobs
# running or waiting.
_lines: dict[str, deque[_Job]] = {}
_by_address: dict[str, int] = {}
_by_player: dict[int, int] = {}
# When each address with jobs was last served (a count of jobs started).
_served: dict[str, int] = {}
_started = itertools.count()


def _reset_after_fork() -> None:
    global _lock, _pool, _running, _lines, _by_address, _by_player, _served
    _lock, _pool, _running = threading.RLock(), None, 0
    _lines, _by_address, _by_player, _served = {}, {}, {}, {}


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


def heavy_submit(
    function: Callable[..., T], /, *, requester: Requester = SERVER, **arguments: Any
) -> concurrent.futures.Future[T]:
    """Queue `function(**arguments)` for `requester` in the pool; its future.

    Raises a 503 `busy` (with `Retry-After`) when the requester's player has a
    job running or waiting already, its address HEAVY_WORK_PER_ADDRESS, or
    HEAVY_WORK_QUEUE jobs wait already while every process is busy.
    """
    job = _Job(function, arguments, requester)
    with _lock:
        refusal = _refusal(requester)
        if refusal is not None:
            logger.warning("heavy work refused %s for %s: %s", function.__name__, requester,
                           refusal)  # fmt: skip
            raise _busy(refusal)
        _hold(requester, +1)
        _lines.setdefault(requester.address, deque()).append(job)
        job.future.add_done_callback(functools.partial(_job_done, job))
        _dispatch()
    return job.future


def _refusal(requester: Requester) -> str | None:
    """Why a job for `requester` cannot wait its turn now, or None."""
    if requester.player is not None and _by_player.get(requester.player):
        return "You have a hint or a replay under way already."
    if _by_address.get(requester.address, 0) >= settings.HEAVY_WORK_PER_ADDRESS:
        return "Your address has as many hints and replays under way as it may."
    waiting = sum(len(line) for line in _lines.values())
    if _running >= settings.HEAVY_WORK_PROCESSES and waiting >= settings.HEAVY_WORK_QUEUE:
        return "The server is busy with other hints and replays."
    return None


def _hold(requester: Requester, change: int) -> None:
    """Count `change` jobs more (or fewer) for the requester's address and player."""
    _count_change(_by_address, requester.address, change)
    if requester.player is not None:
        _count_change(_by_player, requester.player, change)
    if requester.address not in _by_address:
        _served.pop(requester.address, None)  # an address with no jobs is new again


def _count_change(counts: dict[K, int], key: K, change: int) -> None:
    counts[key] = counts.get(key, 0) + change
    if not counts[key]:
        del counts[key]


def _job_done(job: _Job, future: concurrent.futures.Future[Any]) -> None:
    """A job given up while it waited leaves its line, and its place is free again."""
    if not future.cancelled():
        return  # a job that ran gave its place back when it ended (_work_done)
    with _lock:
        line = _lines.get(job.requester.address)
        if line is not None and job in line:
            line.remove(job)
            if not line:
                del _lines[job.requester.address]
        _hold(job.requester, -1)


def _dispatch() -> None:
    """Start waiting jobs while a process is free: each time the next job of the
    address served longest ago (never served first)."""
    global _running
    while _running < settings.HEAVY_WORK_PROCESSES and _lines:
        address = min(_lines, key=lambda waiting: _served.get(waiting, -1))
        line = _lines[address]
        job = line.popleft()
        if not line:
            del _lines[address]
        if not job.future.set_running_or_notify_cancel():
            continue  # cancelled while it waited
        _served[address] = next(_started)
        _running += 1
        try:
            work = _executor().submit(job.function, **job.arguments)
        except Exception as error:  # a broken pool, say: heavy_wait says so
            _running -= 1
            _hold(job.requester, -1)
            job.future.set_exception(error)
            continue
        work.add_done_callback(functools.partial(_work_done, job))


def _work_done(job: _Job, work: concurrent.futures.Future[Any]) -> None:
    """A process finished `job`: its place is free and the next job starts, then its
    result is handed on (so that whoever waits for it may ask again at once)."""
    global _pool, _running
    error = work.exception() if not work.cancelled() else concurrent.futures.CancelledError()
    with _lock:
        _running -= 1
        _hold(job.requester, -1)
        if isinstance(error, concurrent.futures.process.BrokenProcessPool):
            # A pool process died (killed, out of memory): the next job starts a new pool.
            _pool = None
        _dispatch()
    if error is not None:
        job.future.set_exception(error)
    else:
        job.future.set_result(work.result())


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
        logger.exception("a heavy work process died")
        raise _busy("The server could not finish this work.") from None


def heavy_run(
    function: Callable[..., T], /, *, requester: Requester = SERVER, **arguments: Any
) -> T:
    """`function(**arguments)` run in the pool for `requester`, waited for without a
    database connection."""
    return heavy_wait(heavy_submit(function, requester=requester, **arguments))
