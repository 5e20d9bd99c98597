"""Guards in front of every websocket: the Origin check, a clean refusal for unrouted
paths, and the reading of a client's message (`client_message`).

The Origin rule is the one Django applies to a form post's Origin header
(`CsrfViewMiddleware`), compared whole (scheme, host and port):

- the socket's Host header must be one of `ALLOWED_HOSTS`, and
- the Origin must be the socket's own origin, `http://` + Host for a plain
  socket, `https://` + Host for one over TLS (`wss`, or the
  `SECURE_PROXY_SSL_HEADER` a trusted proxy sets), or
- an origin listed in `CSRF_TRUSTED_ORIGINS` (exactly, or `https://*.example.com`
  for its subdomains, as Django reads that setting).

So a page of this site opens its board's socket, and a page anywhere else,
even on the same host name at another port or scheme (`http://localhost:9999`),
cannot; neither can a client that sends no Origin. Channels'
`AllowedHostsOriginValidator` compared the Origin's host name alone.

A refusal closes the socket before accepting it, which the server answers with
HTTP 403.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any
from urllib.parse import urlsplit

import psycopg
import redis.exceptions
from channels.consumer import get_handler_name
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http.request import split_domain_port, validate_host
from django.utils.http import is_same_domain

from easyharp_site.compat import frame_writer
from easyharp_site.middleware import ASGIApp, Receive, Scope, Send
from easyharp_site.parsers import has_lone_surrogate

logger = logging.getLogger(__name__)


class HandlersWithoutHop:
    """A consumer's `dispatch` that runs the message's handler without Channels'
    connection-closing hop.

    Channels' `dispatch` first closes stale database connections in a worker
    thread, for every message a socket handles. Every database access of the
    project's sockets goes through `database_sync_to_async`, which does that
    itself, while the hop queues behind the sockets' reads in the same thread:
    the accept of new sockets when thousands connect at once, and a race's
    state as it reaches each of its players several times a second.
    """

    async def dispatch(self, message: dict[str, Any]) -> None:
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)


class MessageRefused(Exception):
    """A client's message that is not a JSON text within the socket's size limit."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def client_message(text_data: str | None, limit: int) -> Any:
    """The JSON content of a client's text frame of at most `limit` bytes (UTF-8);
    `MessageRefused` for a binary frame, a larger one, one that is not JSON, or one
    with a string no encoder can write (a lone surrogate)."""
    if text_data is None:
        raise MessageRefused("binary_not_supported", "Send JSON text frames.")
    if len(text_data.encode()) > limit:
        raise MessageRefused(
            "message_too_large", f"A message is a JSON text of at most {limit} bytes."
        )
    try:
        content = json.loads(text_data)
    except (ValueError, RecursionError):
        raise MessageRefused("invalid_json", "The message is not JSON.") from None
    # A frame's text is valid UTF-8: a surrogate can only come from a `\u` escape, so a
    # message without one (every action a player streams) is not walked.
    if "\\u" in text_data and has_lone_surrogate(content):
        raise MessageRefused("invalid_json", "The message holds a lone surrogate (\\ud800).")
    return content


async def refuse_socket(scope: Scope, receive: Receive, send: Send) -> None:
    """Close the socket before accepting it: the server answers the upgrade with 403."""
    message = await receive()
    if message["type"] == "websocket.connect":
        await send({"type": "websocket.close"})


class OriginCheck:
    """Lets a websocket through only from an allowed origin (see the module docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and not origin_allowed(scope):
            await refuse_socket(scope, receive, send)
            return
        await self.app(scope, receive, send)


def origin_allowed(scope: Scope) -> bool:
    """Whether the socket's Origin header is allowed for the host it was sent to."""
    headers = _headers(scope)
    origin = headers.get("origin", "").lower()
    host = headers.get("host", "").lower()
    domain, _port = split_domain_port(host)
    if not origin or not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return False
    if origin == f"{'https' if _is_secure(scope, headers) else 'http'}://{host}":
        return True
    trusted = [entry.lower() for entry in settings.CSRF_TRUSTED_ORIGINS]
    if origin in trusted:
        return True
    parsed = urlsplit(origin)
    return any(
        parsed.scheme == pattern.scheme and is_same_domain(parsed.netloc, pattern.netloc[1:])
        for pattern in (urlsplit(entry) for entry in trusted if "://*." in entry)
    )


def _headers(scope: Scope) -> dict[str, str]:
    return {
        name.decode("latin1").lower(): value.decode("latin1")
        for name, value in scope.get("headers", [])
    }


def _is_secure(scope: Scope, headers: dict[str, Any]) -> bool:
    if scope.get("scheme") == "wss":
        return True
    proxy: tuple[str, str] | None = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy is None:
        return False
    meta_name, expected = proxy
    header = meta_name.removeprefix("HTTP_").replace("_", "-").lower()
    return bool(headers.get(header, "").split(",")[0].strip() == expected)


# --- Writing one framed message to many sockets ---------------------------------

# The scope key under which `DirectFrames` leaves a socket's `FrameWriter`
# (`easyharp_site.compat`).
FRAME_WRITER = "easyharp.frame_writer"


def text_frame(text: str) -> bytes:
    """`text` as one unmasked, uncompressed websocket text frame (RFC 6455, 5.2).

    A server's frames are never masked, so the same bytes are a valid frame on
    every socket: a message read once for a board is framed once for all its
    watchers. An uncompressed frame is valid on a socket that negotiated
    permessage-deflate too (its RSV1 bit is clear).
    """
    payload = text.encode()
    length = len(payload)
    if length < 126:
        return bytes((0x81, length)) + payload
    if length < 1 << 16:
        return bytes((0x81, 126)) + length.to_bytes(2, "big") + payload
    return bytes((0x81, 127)) + length.to_bytes(8, "big") + payload


class DirectFrames:
    """Offers each socket a `FrameWriter` in its scope (`FRAME_WRITER`) when the server allows one.

    Outermost, so that `send` is still the server's own (Channels' session
    middleware wraps it). Under any other server the key is absent and the
    application sends through ASGI only.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            writer = frame_writer(send)
            if writer is not None:
                scope = {**scope, FRAME_WRITER: writer}
        await self.app(scope, receive, send)


# --- Each address's share of the sockets; a clean close when a store is away ------

CLOSE_TOO_MANY = 4429
CLOSE_UNAVAILABLE = 4503

# A store that cannot be reached: PostgreSQL (Django's connection, or the loop's
# pool), or Redis where a socket needs it.
DATABASE_AWAY = (OperationalError, InterfaceError, psycopg.OperationalError)
REDIS_AWAY = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)

# Addresses kept before the ones whose allowance is whole again are forgotten.
ADDRESSES_KEPT = 10_000


async def close_with_error(
    receive: Receive, send: Send, close_code: int, code: str, message: str, *, accepted: bool
) -> None:
    """Send the error (`{"type": "error", ...}`), then close with `close_code`; a socket not
    accepted yet is accepted first, so that the client sees the code (a close before
    the handshake reaches a browser as a bare failure)."""
    if not accepted:
        first = await receive()
        if first["type"] != "websocket.connect":
            return
        await send({"type": "websocket.accept"})
    error = {"type": "error", "error": {"code": code, "message": message}}
    await send({"type": "websocket.send", "text": json.dumps(error)})
    await send({"type": "websocket.close", "code": close_code})


class _Handshake:
    """How far a socket went: accepted, closed (by either side), and whether the
    application sent it anything (`served`)."""

    def __init__(self, receive: Receive, send: Send) -> None:
        self._receive, self.raw_send = receive, send
        self.connected = self.accepted = self.closed = self.served = False

    async def receive(self) -> dict[str, Any]:
        message = await self._receive()
        if message["type"] == "websocket.connect":
            self.connected = True
        elif message["type"] == "websocket.disconnect":
            self.closed = True
        return message

    async def send(self, message: dict[str, Any]) -> None:
        self._note(message)
        if message["type"] == "websocket.send":
            self.served = True
        await self.raw_send(message)

    def _note(self, message: dict[str, Any]) -> None:
        if message["type"] == "websocket.accept":
            self.accepted = True
        elif message["type"] == "websocket.close":
            self.closed = True


class SocketGuard:
    """Each client address's share of this process's sockets, and a clean close when a
    store is away.

    An address may open `SOCKET_CONNECTS_PER_SECOND` sockets a second (a burst
    of `SOCKET_CONNECT_BURST`) and hold `SOCKETS_PER_ADDRESS` open; one more is
    closed with 4429 (`too_many_connects`, `too_many_sockets`) before it reads
    the session or the database, so a flood of connects costs the process
    little. The counts are the process's own: the edge (nginx's `limit_req` on
    `/ws/` and `limit_conn`) bounds an address over every process.

    A socket whose consumer fails because PostgreSQL cannot be reached (its
    session, a read, a write) is closed with 4503 `database_unavailable`, and
    one whose consumer Redis failed with 4503 `live_unavailable`, instead of an
    HTTP 500 or a close without a code.

    Once the database failed a socket, one socket at a time finds out whether
    it is back (it is back once that socket is sent anything); every other
    socket meanwhile is closed with 4503 at once, instead of each waiting
    for a connection the pool cannot make (`DATABASE_POOL_TIMEOUT`).

    The address is the client's as the server saw it (uvicorn's, after the
    trusted proxy's `X-Forwarded-For`); a socket without one is not counted.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        # Per address: the connects it may still make at once, and when that was counted.
        self.allowance: dict[str, tuple[float, float]] = {}
        self.open: dict[str, int] = {}
        # Set when a socket found the database away, until one is served again; when
        # the socket finding out started (one at a time).
        self.database_away = False
        self.probing_since: float | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        probe = self._probe()
        if probe is None:
            await _refuse_at_once(
                receive, send, CLOSE_UNAVAILABLE, "database_unavailable", DATABASE_MESSAGE
            )
            return
        client = scope.get("client")
        address = client[0] if client else None
        if address is not None:
            refusal = self._admit(address)
            if refusal is not None:
                self._probe_ended(probe, served=False)
                await _refuse_at_once(receive, send, CLOSE_TOO_MANY, *refusal)
                return
            self.open[address] = self.open.get(address, 0) + 1
        handshake = _Handshake(receive, send)
        served: Send = self._watching(handshake) if probe else handshake.send
        try:
            await self.app(scope, handshake.receive, served)
        except DATABASE_AWAY:
            logger.warning("A socket failed: the database is away", exc_info=True)
            self.database_away = True
            await self._close(handshake, "database_unavailable", DATABASE_MESSAGE)
        except REDIS_AWAY:
            logger.warning("A socket failed: its live extras are away", exc_info=True)
            await self._close(handshake, "live_unavailable", LIVE_MESSAGE)
        finally:
            self._probe_ended(probe, served=handshake.served)
            if address is not None:
                left = self.open[address] - 1
                if left:
                    self.open[address] = left
                else:
                    del self.open[address]

    def _probe(self) -> bool | None:
        """Whether this socket finds out if the database is back (False: it is not known
        away), or None when another socket is finding out (close this one at once)."""
        if not self.database_away:
            return False
        now = time.monotonic()
        if self.probing_since is not None and now - self.probing_since < PROBE_SECONDS:
            return None
        self.probing_since = now
        return True

    def _watching(self, handshake: _Handshake) -> Send:
        """The socket's `send`, which notes the database back at the first message served."""

        async def watched(message: dict[str, Any]) -> None:
            await handshake.send(message)
            if handshake.served and self.database_away:
                self.database_away, self.probing_since = False, None

        return watched

    def _probe_ended(self, probe: bool, *, served: bool) -> None:
        if probe and not served:
            self.probing_since = None

    def _admit(self, address: str) -> tuple[str, str] | None:
        """None when the address may open one more socket (counted), else the refusal."""
        if self.open.get(address, 0) >= settings.SOCKETS_PER_ADDRESS:
            return (
                "too_many_sockets",
                f"At most {settings.SOCKETS_PER_ADDRESS} sockets from one address: "
                "close one first.",
            )
        rate, burst = settings.SOCKET_CONNECTS_PER_SECOND, settings.SOCKET_CONNECT_BURST
        now = time.monotonic()
        tokens, at = self.allowance.get(address, (float(burst), now))
        tokens = min(float(burst), tokens + (now - at) * rate)
        if tokens < 1:
            self.allowance[address] = (tokens, now)
            return ("too_many_connects", "Too many new sockets from this address: wait a moment.")
        if len(self.allowance) >= ADDRESSES_KEPT and address not in self.allowance:
            self._forget_whole(now)
        self.allowance[address] = (tokens - 1, now)
        return None

    def _forget_whole(self, now: float) -> None:
        """Forget the addresses whose allowance is whole again (as good as never seen)."""
        rate, burst = settings.SOCKET_CONNECTS_PER_SECOND, settings.SOCKET_CONNECT_BURST
        self.allowance = {
            address: (tokens, at)
            for address, (tokens, at) in self.allowance.items()
            if tokens + (now - at) * rate < burst
        }

    async def _close(self, handshake: _Handshake, code: str, message: str) -> None:
        """Close a socket whose application failed, with the error (not counted as served)."""
        if handshake.closed:
            return

        async def send(message: dict[str, Any]) -> None:
            handshake._note(message)
            await handshake.raw_send(message)

        try:
            if not handshake.connected:
                first = await handshake.receive()
                if first["type"] != "websocket.connect":
                    return
            if not handshake.accepted:
                await send({"type": "websocket.accept"})
            await close_with_error(
                handshake.receive, send, CLOSE_UNAVAILABLE, code, message, accepted=True
            )
        except Exception:  # the client went away meanwhile
            logger.debug("Could not close a failed socket", exc_info=True)


async def _refuse_at_once(
    receive: Receive, send: Send, close_code: int, code: str, message: str
) -> None:
    """Refuse a socket the application never sees (the client may be gone already)."""
    try:
        await close_with_error(receive, send, close_code, code, message, accepted=False)
    except Exception:
        logger.debug("Could not refuse a socket", exc_info=True)


# How long a socket finding out whether the database is back may take before
# another may try (its connect timeout and the pool's wait, with room).
PROBE_SECONDS = 30.0
DATABASE_MESSAGE = "The database cannot be reached: connect again in a moment."
LIVE_MESSAGE = "Live play cannot be reached: connect again in a moment."
