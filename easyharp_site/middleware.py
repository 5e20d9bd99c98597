"""Request guards that keep refusals clear when input is hostile or a backend is down.

`BodyCapMiddleware` (ASGI, in front of Django) bounds every HTTP body by
`DATA_UPLOAD_MAX_MEMORY_SIZE` before Django buffers it: a `Content-Length`
over the cap is refused before a byte is read, and a body without one (or
longer than it said) is refused as soon as the bytes read pass the cap. Django's
own ASGI handler reads the whole body, into a temporary file past
`FILE_UPLOAD_MAX_MEMORY_SIZE`, before any middleware or view can look at it.

`RequestGuardMiddleware` (Django) does what the views cannot do for themselves:

- It refuses methods nobody uses (TRACE, CONNECT, ...) with 405.
- It refuses multipart bodies on the API with 415: the API takes JSON and no
  uploads, and a multipart body is the one kind Django would otherwise stream
  to upload handlers without the size cap.
- It enforces `DATA_UPLOAD_MAX_MEMORY_SIZE` on every request body, whatever its
  content type, before any parser runs (and under WSGI, where no ASGI cap is in
  front). Django only checks the limit when `request.body` is read; DRF's
  parsers read the request stream directly and would parse a body of any size.
- It turns a lost database connection (`OperationalError`/`InterfaceError`
  raised by a view) into a 503 in the documented error shape, with
  `Retry-After`, instead of a bare 500. Django's connection health checks
  (`conn_health_checks=True`) then reconnect on a later request, so the service
  recovers by itself once the database is back.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse, UnreadablePostError

from easyharp_site.errors import error_body

logger = logging.getLogger(__name__)

# Methods whose body Django or DRF may parse.
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Methods the site answers; anything else (TRACE, CONNECT, WebDAV's, made-up
# ones) is a 405 before any view runs.
ALLOWED_METHODS = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE")
RETRY_AFTER_SECONDS = 5


def error_response(*, status: int, code: str, message: str) -> HttpResponse:
    """A refusal in the service's documented shape: `{"error": {"code", "message"}}`."""
    return JsonResponse(error_body(code, message), status=status)


UNAVAILABLE = (
    "The service is briefly unavailable (its database cannot be reached). "
    "Nothing was stored; please retry in a few seconds."
)


def service_unavailable_response(request: HttpRequest | None = None) -> HttpResponse:
    """The 503 sent while the database cannot be reached: JSON for the API, a page otherwise."""
    if request is not None and not request.path.startswith("/api/"):
        response = HttpResponse(
            f"<!doctype html><title>503</title><p>{UNAVAILABLE}</p>\n",
            status=503,
            content_type="text/html; charset=utf-8",
        )
    else:
        response = error_response(status=503, code="service_unavailable", message=UNAVAILABLE)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def _too_large_message() -> str:
    return f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes."


def request_too_large_response() -> HttpResponse:
    """The 413 sent for a body over `DATA_UPLOAD_MAX_MEMORY_SIZE`."""
    return error_response(status=413, code="request_too_large", message=_too_large_message())


Scope: TypeAlias = dict[str, Any]
Message: TypeAlias = dict[str, Any]
Receive: TypeAlias = Callable[[], Awaitable[Message]]
Send: TypeAlias = Callable[[Message], Awaitable[None]]
ASGIApp: TypeAlias = Callable[..., Awaitable[None]]


class BodyCapMiddleware:
    """ASGI: HTTP bodies over `DATA_UPLOAD_MAX_MEMORY_SIZE` get a 413 before they are buffered.

    A body within the cap is read here (at most the cap, in memory) and handed
    to the application unchanged.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        cap = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if scope["type"] != "http" or cap is None:
            await self.app(scope, receive, send)
            return
        if _announced_length(scope) > cap:
            await _send_too_large(send)
            return
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break  # a disconnect: the application sees it and stops
            size += len(message.get("body", b""))
            if size > cap:
                await _send_too_large(send)
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            # The body as read, then the live channel (to hear a disconnect).
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


def _announced_length(scope: Scope) -> int:
    """The Content-Length the client sent, or 0 when absent or unreadable (Django answers that)."""
    for name, value in scope.get("headers", []):
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return 0
    return 0


async def _send_too_large(send: Send) -> None:
    await send_error(
        send, status=413, body=error_body("request_too_large", _too_large_message()),
        headers=[(b"connection", b"close")],
    )  # fmt: skip


async def send_error(
    send: Send, *, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]]
) -> None:
    """An ASGI response in the error shape (`body` from `error_body`), with `headers`."""
    content = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(content)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": content})


def is_database_outage(exc: BaseException) -> bool:
    """Whether `exc` means the database is unreachable (not a bug in a query)."""
    return isinstance(exc, (OperationalError, InterfaceError))


class RequestGuardMiddleware:
    """Caps request bodies and maps database outages to 503 (see the module docstring)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _has_nul(request):
            # PostgreSQL text cannot hold NUL: a lookup with one fails inside the
            # driver (a 500) instead of simply finding nothing.
            return error_response(
                status=400, code="bad_request", message="The request contains a NUL character."
            )
        if request.method not in ALLOWED_METHODS:
            response = error_response(
                status=405,
                code="method_not_allowed",
                message=f"Method {request.method!r} is not allowed.",
            )
            response["Allow"] = ", ".join(ALLOWED_METHODS)
            return response
        if request.method in _BODY_METHODS:
            try:
                # Reading `body` applies Django's size check to the real buffered
                # size, whatever Content-Length claimed; parsers then read the copy.
                request.body  # noqa: B018
            except RequestDataTooBig:
                return request_too_large_response()
            except (ValueError, UnreadablePostError):
                # A Content-Length that is not a number, or a body cut short.
                return error_response(
                    status=400, code="bad_request", message="The request body could not be read."
                )
        if _is_multipart(request) and request.path.startswith("/api/"):
            return error_response(
                status=415,
                code="unsupported_media_type",
                message="The API takes JSON bodies (Content-Type: application/json), "
                "not multipart uploads.",
            )
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if is_database_outage(exception):
            logger.warning(
                "database unavailable while serving %s %s: %s",
                request.method,
                request.path,
                exception,
            )
            return service_unavailable_response(request)
        if isinstance(exception, RequestDataTooBig):
            return request_too_large_response()
        return None


def _is_multipart(request: HttpRequest) -> bool:
    return (request.content_type or "").lower().startswith("multipart/")


def _has_nul(request: HttpRequest) -> bool:
    if "\x00" in request.path or "\x00" in request.META.get("QUERY_STRING", ""):
        return True
    if any("\x00" in value for values in request.GET.lists() for value in values[1]):
        return True
    return any(
        "\x00" in value
        for key, value in request.META.items()
        if key.startswith("HTTP_") and isinstance(value, str)
    )
