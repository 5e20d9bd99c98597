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
from typing import Any
from urllib.parse import urlsplit

from channels.consumer import get_handler_name
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.utils.http import is_same_domain

from easyharp_site.compat import frame_writer
from easyharp_site.middleware import ASGIApp, Receive, Scope, Send
from easyharp_site.parsers import has_lone_surrogate


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
    if has_lone_surrogate(content):
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
