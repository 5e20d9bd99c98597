"""One member per server process on the default channel layer.

The live boards (`leaderboards.live.BoardHub`) and the sockets of signed-in
players (`accounts.live.PlayerSockets`) each keep one channel per event loop,
the only member of the groups that the loop's sockets need, and hand each
message to those sockets directly: a message costs one delivery per process,
not one per socket. This is their common part: the instance of the running
loop, and a receiving loop that rides out channel layer outages.

The services announce changes through `announce_soon`, and hand on what
many requests can do together through a `Gathering`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any, ClassVar, Generic, Self, TypeVar

from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import BaseChannelLayer, get_channel_layer

from easyharp_site.compat import server_loop

# How long a socket waits for a channel of its own before it goes on without one.
CHANNEL_OPEN_SECONDS = 2.0

# Pause after a failed receive before retrying, doubling up to the cap.
RETRY_FIRST_SECONDS = 0.1
RETRY_MAX_SECONDS = 5.0

# The announcements handed to a loop on its own thread, until they are done.
_running: set[asyncio.Task[None]] = set()


async def channel_opened(
    alias: str, *, logger: logging.Logger
) -> tuple[BaseChannelLayer, str] | None:
    """The layer `alias` and a new channel of it for a socket; None without a layer, or
    when it cannot be reached within `CHANNEL_OPEN_SECONDS` (Redis away: logged), so
    that the socket goes on without what the layer brings."""
    try:
        layer = get_channel_layer(alias)
        if layer is None:
            return None
        name = await asyncio.wait_for(layer.new_channel(), CHANNEL_OPEN_SECONDS)
    except Exception:
        logger.warning("The channel layer is away: a socket goes on without it", exc_info=True)
        return None
    return layer, name


def announce_on_layer(
    send: Callable[[BaseChannelLayer], Coroutine[Any, Any, None]],
    *,
    logger: logging.Logger,
    failed: str,
) -> None:
    """`announce_soon(send(layer))` on the default channel layer; nothing without
    one. A layer that cannot be opened is logged with `failed`, as a failed
    announcement is."""
    try:
        layer = get_channel_layer()
    except Exception:
        logger.warning(failed, exc_info=True)
        return
    if layer is not None:
        announce_soon(send(layer), logger=logger, failed=failed)


def announce_soon(
    announcement: Coroutine[Any, Any, None], *, logger: logging.Logger, failed: str
) -> None:
    """Run an `announcement` on the channel layer from synchronous code; never raises.

    In a request's thread under the ASGI server (a view, its `on_commit`), it is
    handed to the server's event loop and the request goes on at once: the
    request neither waits for Redis nor pays for a round trip between its thread
    and the loop. Announcements handed on from one thread start in the order
    they were handed on. Called on a running loop's own thread (synchronous
    code inside async code), it becomes a task of that loop. Elsewhere (a job,
    a management command, a test without a server) it runs to its end before
    this returns. A failure is logged with `failed`: the change itself is
    stored, and what listens catches up later.
    """

    def done(future: Future[None] | asyncio.Task[None]) -> None:
        if isinstance(future, asyncio.Task):
            _running.discard(future)
        if not future.cancelled() and future.exception() is not None:
            logger.warning(failed, exc_info=future.exception())

    loop = server_loop()
    if loop is not None:
        asyncio.run_coroutine_threadsafe(announcement, loop).add_done_callback(done)
        return
    try:
        here = asyncio.get_running_loop()
    except RuntimeError:
        here = None
    if here is not None:
        # Synchronous code called on a loop's own thread: a task of that loop, kept
        # until done (the loop holds its tasks only weakly).
        task = here.create_task(announcement)
        _running.add(task)
        task.add_done_callback(done)
        return
    try:
        async_to_sync(_run)(announcement)
    except Exception:
        logger.warning(failed, exc_info=True)


async def _run(announcement: Coroutine[Any, Any, None]) -> None:
    await announcement


T = TypeVar("T")

# How long a server process gathers what its requests hand on after their
# commits: the live boards' hubs read a board at most a few times a second
# anyway, and a record in the board mirror stays pending (read from the table)
# only that much longer.
GATHER_SECONDS = 0.05


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class Gathering(Generic[T]):
    """What a server process's requests hand on after their commit, done once for
    all those handed on within `seconds`.

    `add(item)` from a request's thread under the server, or from a socket's
    handler on the server's loop itself, returns at once: the
    first item of a gathering asks the server's event loop to take, `seconds`
    later, every item added meanwhile, and to call `flush(items)` once, in the
    order they came. A `flush` that does blocking I/O (`blocking`) runs in a
    thread of the loop's executor, with `server_loop()` still known there;
    otherwise on the loop itself. Elsewhere (a job, a command, a test without a
    server) `flush([item])` runs before `add` returns. So one message or one
    Redis round trip serves every submission of those milliseconds, instead of
    one each (docs/PERFORMANCE.md). `flush` must not raise; an
    exception it lets through is logged.
    """

    def __init__(
        self,
        flush: Callable[[list[T]], None],
        *,
        blocking: bool,
        seconds: float = GATHER_SECONDS,
        logger: logging.Logger,
    ) -> None:
        self.flush = flush
        self.seconds = seconds
        self._blocking = blocking
        self._logger = logger
        self._items: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[T]] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    def add(self, item: T) -> None:
        """Hand `item` on (see the class)."""
        loop = server_loop() or _running_loop()
        if loop is None:
            self.flush([item])
            return
        with self._lock:
            items = self._items.get(loop)
            first = items is None
            if items is None:
                items = self._items[loop] = []
            items.append(item)
        if first:
            loop.call_soon_threadsafe(loop.call_later, self.seconds, self._take, loop)

    def _take(self, loop: asyncio.AbstractEventLoop) -> None:
        """On the server's loop: flush what was gathered since the first item."""
        with self._lock:
            items = self._items.pop(loop, [])
        if not items:
            return
        if not self._blocking:
            try:
                self.flush(items)
            except Exception:
                self._logger.exception("Gathered work of %d request(s) failed", len(items))
            return
        task = loop.create_task(sync_to_async(self.flush, thread_sensitive=False)(items))
        _running.add(task)

        def done(task: asyncio.Task[None]) -> None:
            _running.discard(task)
            if not task.cancelled() and task.exception() is not None:
                self._logger.error(
                    "Gathered work of %d request(s) failed",
                    len(items),
                    exc_info=task.exception(),
                )

        task.add_done_callback(done)


class LayerMember:
    """The process's member of some groups; a subclass says what a message does."""

    _instances: ClassVar[
        weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[type[LayerMember], Any]]
    ] = weakref.WeakKeyDictionary()
    # Where the subclass logs, and the words that name it there.
    logger: ClassVar[logging.Logger]
    log_name: ClassVar[str]

    def __init__(self) -> None:
        self._channel: str | None = None
        self._receiver: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    @classmethod
    def current(cls) -> Self:
        """The instance of the running event loop, created on first use."""
        members = LayerMember._instances.setdefault(asyncio.get_running_loop(), {})
        member = members.get(cls)
        if member is None:
            member = members[cls] = cls()
        return member

    @property
    def _layer(self) -> BaseChannelLayer:
        # Looked up each time so that a settings change (tests) takes effect.
        return get_channel_layer()

    def _keep_receiving(self) -> None:
        """Start receiving, unless the receiver runs already."""
        if self._receiver is None or self._receiver.done():
            self._receiver = asyncio.create_task(self._receive_forever())

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run `work` in a task of its own, kept until it ends."""
        task = asyncio.get_running_loop().create_task(work)
        # The loop keeps only a weak reference to its tasks.
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _receive_forever(self) -> None:
        """Receive messages for ever; once the layer is back after an outage, `_layer_back`."""
        delay = RETRY_FIRST_SECONDS
        lost = False
        while True:
            try:
                if self._channel is None:
                    # The layer was down when the first socket came.
                    self._channel = await self._layer.new_channel()
                    lost = True
                if lost:
                    # The layer may have lost our memberships (a Redis restart).
                    await self._layer_back()
                    lost = False
                message = await self._layer.receive(self._channel)
                delay = RETRY_FIRST_SECONDS
            except asyncio.CancelledError:
                raise
            except Exception:
                if not lost:
                    self.logger.warning(
                        "%s: lost the channel layer; retrying", self.log_name, exc_info=True
                    )
                lost = True
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX_SECONDS)
                continue
            self._handle(message)

    async def _layer_back(self) -> None:
        """Join the groups again and catch up on what may have been missed."""
        raise NotImplementedError

    def _handle(self, message: dict[str, Any]) -> None:
        """Act on one message received."""
        raise NotImplementedError


Key = TypeVar("Key")
Socket = TypeVar("Socket")


class SocketsByKey(LayerMember, Generic[Key, Socket]):
    """A member that hands what its groups bring to this process's sockets, by key.

    A socket calls `watch(key, socket)` when it starts listening and
    `unwatch(key, socket)` when it ends, however it ends; the member is in the
    group of each key (`_group(key)`, which several keys may share) while a
    socket here watches one of them. A subclass says what a message does
    (`_handle`, with `_sockets`) and what its sockets do once the layer is
    back after an outage (`_caught_up`).
    """

    def __init__(self) -> None:
        super().__init__()
        self._sockets: dict[Key, set[Socket]] = {}
        self._joined: set[str] = set()
        self._lock = asyncio.Lock()

    def _group(self, key: Key) -> str:
        raise NotImplementedError

    async def watch(self, key: Key, socket: Socket) -> None:
        """Hand `socket` what the key's group brings, from now on."""
        self._sockets.setdefault(key, set()).add(socket)
        group = self._group(key)
        async with self._lock:
            try:
                if self._channel is None:
                    self._channel = await self._layer.new_channel()
                if group not in self._joined:
                    await self._layer.group_add(group, self._channel)
                    self._joined.add(group)
            except Exception:
                # The receiver joins again, and `_caught_up` runs, once the layer is back.
                self.logger.warning("%s: could not join %s", self.log_name, group)
            self._keep_receiving()

    def unwatch(self, key: Key, socket: Socket) -> None:
        """Forget `socket`; leave the key's group when no socket here needs it.

        Synchronous, so that it runs to its end in the `finally` of a cancelled task.
        """
        sockets = self._sockets.get(key)
        if sockets is None or socket not in sockets:
            return
        sockets.discard(socket)
        if not sockets:
            del self._sockets[key]
            self._spawn(self._leave(self._group(key)))

    async def _leave(self, group: str) -> None:
        async with self._lock:
            needed = any(self._group(key) == group for key in self._sockets)
            if self._channel is None or needed or group not in self._joined:
                return
            self._joined.discard(group)
            try:
                await self._layer.group_discard(group, self._channel)
            except Exception:
                # A stray message later finds no socket here.
                self.logger.warning("%s: could not leave %s", self.log_name, group)

    async def _layer_back(self) -> None:
        assert self._channel is not None
        self._joined = {self._group(key) for key in self._sockets}
        for group in self._joined:
            await self._layer.group_add(group, self._channel)
        self.logger.info("%s: channel layer back", self.log_name)
        self._caught_up()

    def _caught_up(self) -> None:
        """The layer is back after an outage: messages may have been lost."""
        raise NotImplementedError
