"""A fair share of a server process for every client address, on the heavy routes.

A server process runs every request's Python under one interpreter lock. Sixty
requests from one address at once (a burst of replays, say, each a few
milliseconds of work) all ran in threads of their own and took turns on that
lock with whoever else was served, so a bystander's request waited behind the
whole burst (docs/RELIABILITY.md).

`FairShareMiddleware` (ASGI, in front of Django) lets at most
`REQUEST_CONCURRENCY_PER_ADDRESS` requests of one client address to the heavy
routes (`HEAVY_PATHS`: replays, hints, share pictures) run in the application
at once, per process. The next ones wait their turn in that address's line (in
the event loop: a waiting request holds no thread and no database connection),
in order of arrival; one that would wait longer than `REQUEST_QUEUE_SECONDS`,
or find `REQUEST_QUEUE_PER_ADDRESS` already waiting, is answered at once with a
429 `too_many_at_once` and `Retry-After`. Other addresses are not held up by
anyone's line, so a burst costs its sender the wait, and everybody else at most
the share of the lock that a few requests take.

Every other request passes straight through: pages and ordinary reads cost
milliseconds, and the players of one school or office load eighty pages at
once; refusing some of them protected nobody (the edge's connection limit
bounds a flood of them).

A request that waits on work done in another process (a hint or a replay in
`games.pool`) lends its turn for that time (`turn_lent`): waiting costs this
process nothing, and the next request of its address runs meanwhile. It takes
a turn back, ahead of the line, when the work is done.

The address is the one the limits count (`easyharp_site.throttling.address_key`:
the ASGI server's client address, which it takes from the edge's
`X-Forwarded-For` only for the edge; IPv6 by /64 block). Websockets are not
counted: they are long-lived, and their own limits apply (`easyharp_site.sockets`).
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from django.conf import settings

from easyharp_site.errors import error_body
from easyharp_site.middleware import ASGIApp, Receive, Scope, Send, send_error
from easyharp_site.throttling import address_key

# The routes whose requests cost more than a page: a replay built, a hint, a share
# picture drawn (the edge limits the same ones, deploy/nginx).
HEAVY_PATHS = re.compile(
    r"/(api/hint/|api/games/[0-9]+/replay/|api/daily/[0-9-]+/par/replay/|cards/)"
)


@dataclass
class _Line:
    """One address's requests in the application, and those waiting their turn."""

    running: int = 0
    waiting: deque[asyncio.Future[None]] = field(default_factory=deque)
    lent: int = 0  # requests that lent their turn and will take one back


@dataclass(frozen=True)
class _Turn:
    """The turn a request holds, as its thread sees it (to lend it)."""

    gate: FairShareMiddleware
    line: _Line
    loop: asyncio.AbstractEventLoop
    loop_thread: int


_turn: ContextVar[_Turn | None] = ContextVar("fair_share_turn", default=None)


@contextmanager
def turn_lent() -> Iterator[None]:
    """Lend the request's turn while its thread waits on work done elsewhere.

    For synchronous code in the request's thread (Django's views run in one);
    outside a request, or on the event loop's own thread, it does nothing.
    """
    turn = _turn.get()
    if turn is None or threading.get_ident() == turn.loop_thread:
        yield
        return
    turn.loop.call_soon_threadsafe(turn.gate._lend, turn.line)
    try:
        yield
    finally:
        asyncio.run_coroutine_threadsafe(turn.gate._take_back(turn.line), turn.loop).result()


class FairShareMiddleware:
    """ASGI: at most `REQUEST_CONCURRENCY_PER_ADDRESS` requests of one address at once."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        # Per event loop, so per process; lines with nobody in them are dropped.
        self.lines: dict[str, _Line] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not HEAVY_PATHS.match(scope["path"]):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        address = address_key(client[0] if client else "")
        line = self.lines.setdefault(address, _Line())
        if not await self._take_turn(line):
            self._forget_if_empty(address, line)
            await _send_refusal(send)
            return
        held = _turn.set(_Turn(self, line, asyncio.get_running_loop(), threading.get_ident()))
        try:
            await self.app(scope, receive, send)
        finally:
            _turn.reset(held)
            self._hand_on(address, line)

    async def _take_turn(self, line: _Line) -> bool:
        """Whether the request may run: at once, or after waiting its turn in time."""
        if line.running < settings.REQUEST_CONCURRENCY_PER_ADDRESS and not line.waiting:
            line.running += 1
            return True
        if len(line.waiting) >= settings.REQUEST_QUEUE_PER_ADDRESS:
            return False
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        line.waiting.append(turn)
        try:
            await asyncio.wait_for(asyncio.shield(turn), settings.REQUEST_QUEUE_SECONDS)
        except TimeoutError:
            if turn.done():
                return True  # handed a turn as the wait ran out: take it
            line.waiting.remove(turn)
            turn.cancel()
            return False
        except asyncio.CancelledError:
            # The client went away while waiting: pass on a turn it was handed.
            if turn.done() and not turn.cancelled():
                line.running -= 1
                self._wake_next(line)
            elif turn in line.waiting:
                line.waiting.remove(turn)
            raise
        return True

    def _lend(self, line: _Line) -> None:
        line.lent += 1
        line.running -= 1
        self._wake_next(line)

    async def _take_back(self, line: _Line) -> None:
        """A turn again for a request that lent its own: at once if one is free, else
        the next one (ahead of those waiting; it was let in before them)."""
        line.lent -= 1
        if line.running < settings.REQUEST_CONCURRENCY_PER_ADDRESS:
            line.running += 1
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        line.waiting.appendleft(turn)
        await turn

    def _hand_on(self, address: str, line: _Line) -> None:
        line.running -= 1
        self._wake_next(line)
        self._forget_if_empty(address, line)

    @staticmethod
    def _wake_next(line: _Line) -> None:
        while line.waiting and line.running < settings.REQUEST_CONCURRENCY_PER_ADDRESS:
            turn = line.waiting.popleft()
            if not turn.done():
                line.running += 1
                turn.set_result(None)

    def _forget_if_empty(self, address: str, line: _Line) -> None:
        if (
            not line.running
            and not line.waiting
            and not line.lent
            and self.lines.get(address) is line
        ):
            del self.lines[address]


TOO_MANY_AT_ONCE = (
    "Too many requests from your address at once; "
    "retry in a second, or wait for the ones under way to finish."
)


async def _send_refusal(send: Send) -> None:
    body = error_body("too_many_at_once", TOO_MANY_AT_ONCE, wait=1)
    await send_error(send, status=429, body=body, headers=[(b"retry-after", b"1")])
