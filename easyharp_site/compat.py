"""Every use of another package's private API, in one place, each pinned by a test
(tests/easyharp_site/test_compat.py) that fails when the package changes what is
relied on here.

- uvicorn: `FrameWriter` reads the state of its `websockets-sansio` protocol to
  write a framed message straight to a socket's transport.
- Django: `SharedPoolRedisCache` shares its Redis cache's connection pools
  between the cache objects of a process (Django ticket #35651).
- asgiref: `server_loop` reads the server's event loop from the thread-local
  that `SyncToAsync` keeps for its own `async_to_sync`.
- daphne: `daphne_without_form_parsing` turns off Twisted's parsing of POSTed
  form bodies, in a process that serves through daphne (`manage.py runserver`).

Nothing else in the project reads another package's private state.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sys
import threading
from typing import Any

from asgiref.sync import SyncToAsync
from django.core.cache.backends.redis import RedisCache, RedisCacheClient

# --- uvicorn: a framed message written straight to a socket ---------------------


class FrameWriter:
    """Writes framed server messages straight to one socket's transport.

    Only for uvicorn's `websockets-sansio` protocol, whose state it reads: the
    handshake done, no close sent or received, and the transport below its
    high-water mark. When it is not `ready`, the caller sends through ASGI as
    usual, which waits for the transport to drain (in a task of the socket's
    own): a slow reader never makes the writer wait, and holds at most the
    transport's buffer and one message.
    """

    __slots__ = ("_protocol",)

    def __init__(self, protocol: Any) -> None:
        self._protocol = protocol

    def ready(self) -> bool:
        """Whether the socket can take a frame now (then `write` it before any await)."""
        protocol = self._protocol
        return bool(
            protocol.handshake_complete
            and not protocol.close_sent
            and not protocol.disconnected
            and protocol.writable.is_set()
            and not protocol.transport.is_closing()
        )

    def write(self, frame: bytes) -> None:
        """Write `frame` to the transport; only right after `ready` said yes."""
        self._protocol.transport.write(frame)


UVICORN_PROTOCOL = (
    "uvicorn.protocols.websockets.websockets_sansio_impl",
    "WebSocketsSansIOProtocol",
)


def frame_writer(send: Any) -> FrameWriter | None:
    """A `FrameWriter` of the socket whose ASGI `send` this is, under uvicorn's
    `websockets-sansio` protocol; None under any other server."""
    protocol = getattr(send, "__self__", None)
    if (type(protocol).__module__, type(protocol).__name__) == UVICORN_PROTOCOL:
        return FrameWriter(protocol)
    return None


# --- Django: one Redis connection pool per process and server ---------------------

_pools: dict[tuple[str, str], Any] = {}
_pools_lock = threading.Lock()


class SharedPoolClient(RedisCacheClient):
    """Django's Redis cache client, whose pools every cache object of the process shares.

    Django's own keeps its pools on the cache object, and under ASGI each
    request gets a cache object of its own, so every request opened a new
    connection to Redis. redis-py's pool resets itself in a forked child.
    """

    def _get_connection_pool(self, write: bool) -> Any:
        client: Any = self  # Django's client has these; its type stubs do not list them
        index = client._get_connection_pool_index(write)
        servers, options = client._servers, client._pool_options
        key = (servers[index], repr(sorted(options.items())))
        pool = _pools.get(key)
        if pool is None:
            with _pools_lock:
                pool = _pools.get(key)
                if pool is None:
                    pool = client._pool_class.from_url(servers[index], **options)
                    _pools[key] = pool
        return pool


class SharedPoolRedisCache(RedisCache):
    """Django's Redis cache with `SharedPoolClient` (settings.CACHES)."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = SharedPoolClient


# --- asgiref: the server's event loop, from a request's thread -----------------------


def server_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop of the ASGI server that runs this thread's request, if any.

    asgiref keeps it for its own `async_to_sync` in the thread-local of
    `SyncToAsync` (with its process, lest a forked child use its parent's).
    """
    local = SyncToAsync.threadlocal
    if getattr(local, "main_event_loop_pid", None) != os.getpid():
        return None
    loop: asyncio.AbstractEventLoop | None = getattr(local, "main_event_loop", None)
    return loop if loop is not None and loop.is_running() else None


# --- daphne: no form parsing of POSTed bodies ------------------------------------------


def daphne_without_form_parsing() -> bool:
    """In a process that serves through daphne, stop Twisted parsing POSTed form bodies;
    whether it did (nothing happens where daphne's server is not loaded).

    Twisted parses every multipart or URL-encoded POST body into `request.args`
    (all of it, in memory) before daphne hands the raw body to the application,
    which never reads those args; a body it cannot parse (a multipart one
    without a boundary, say) got Twisted's own empty 400 instead of the
    application's answer in the error shape. `parsePOSTFormSubmission` is
    Twisted's switch for exactly this; daphne passes its arguments through.
    """
    if "daphne.server" not in sys.modules:
        return False
    from daphne.http_protocol import WebRequest

    init = WebRequest.__init__
    if getattr(init, "without_form_parsing", False):
        return True

    @functools.wraps(init)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("parsePOSTFormSubmission", False)
        init(self, *args, **kwargs)

    wrapped.without_form_parsing = True  # type: ignore[attr-defined]
    WebRequest.__init__ = wrapped
    return True
