"""Guards in front of every websocket: the Origin check, and a clean refusal for unrouted paths.

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

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.utils.http import is_same_domain

from easyharp_site.middleware import ASGIApp, Receive, Scope, Send


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
