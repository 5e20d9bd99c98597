"""Request guards that keep refusals clear when input is hostile or a backend is down.

`RequestGuardMiddleware` does two things the views cannot do for themselves:

- It enforces `DATA_UPLOAD_MAX_MEMORY_SIZE` on every request body, before any
  parser runs. Django only checks the limit when `request.body` is read; DRF's
  parsers read the request stream directly and would parse a body of any size.
- It turns a lost database connection (`OperationalError`/`InterfaceError`
  raised by a view) into a 503 in the documented error shape, with
  `Retry-After`, instead of a bare 500. Django's connection health checks
  (`conn_health_checks=True`) then reconnect on a later request, so the service
  recovers by itself once the database is back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse, UnreadablePostError

from easyharp_site.errors import error_body

logger = logging.getLogger(__name__)

# Methods whose body Django or DRF may parse.
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
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


def request_too_large_response() -> HttpResponse:
    """The 413 sent for a body over `DATA_UPLOAD_MAX_MEMORY_SIZE`."""
    return error_response(
        status=413,
        code="request_too_large",
        message=f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes.",
    )


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
        if request.method in _BODY_METHODS and not _is_multipart(request):
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
    # Multipart bodies are streamed to upload handlers, which apply their own limits.
    return request.content_type == "multipart/form-data"


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
