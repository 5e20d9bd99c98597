"""The one domain error type, and the handlers that turn every error into one shape.

Every error the API returns reads `{"error": {"code": ..., "message": ..., ...}}`:
domain errors raised by services, DRF's own errors (validation, parse errors,
authentication, permissions, throttling, 404, 405) and an oversized body.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler


class ServiceError(Exception):
    """A request the domain refuses, with a stable code and the HTTP status it maps to.

    `extra` carries machine-readable details (for an illegal action: its index,
    token and reason code) that are merged into the error body.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        status_code: int = status.HTTP_400_BAD_REQUEST,
        **extra: Any,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status_code = status_code
        self.extra = extra


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    """The JSON body of every API error."""
    return {"error": {"code": code, "message": message, **extra}}


# Codes for DRF's own exceptions, by class; messages come from the exception.
_DRF_CODES: list[tuple[type[exceptions.APIException], str]] = [
    (exceptions.ValidationError, "invalid"),
    (exceptions.ParseError, "parse_error"),
    (exceptions.NotAuthenticated, "not_authenticated"),
    (exceptions.AuthenticationFailed, "authentication_failed"),
    (exceptions.PermissionDenied, "permission_denied"),
    (exceptions.NotFound, "not_found"),
    (exceptions.MethodNotAllowed, "method_not_allowed"),
    (exceptions.NotAcceptable, "not_acceptable"),
    (exceptions.UnsupportedMediaType, "unsupported_media_type"),
    (exceptions.Throttled, "throttled"),
]


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's EXCEPTION_HANDLER: map every error to `{"error": {"code", "message", ...}}`."""
    if isinstance(exc, ServiceError):
        return Response(error_body(exc.code, exc.message, **exc.extra), status=exc.status_code)
    if isinstance(exc, RequestDataTooBig):
        return Response(
            error_body("request_too_large", "The request body is too large."),
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, Http404):
        # Keep a message that says what was not found ("'x' is not a date ...").
        exc = exceptions.NotFound(str(exc) or None)
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()

    response = exception_handler(exc, context)
    if response is None or not isinstance(exc, exceptions.APIException):
        return response  # an unexpected error: Django's 500 handling takes over

    code = next((c for cls, c in _DRF_CODES if isinstance(exc, cls)), "error")
    extra: dict[str, Any] = {}
    if isinstance(exc, exceptions.ValidationError):
        message = "The request is not valid."
        detail = exc.detail
        extra["fields"] = detail if isinstance(detail, dict) else {"non_field_errors": detail}
    else:
        message = str(exc.detail)
    wait = getattr(exc, "wait", None)  # Throttled's seconds to wait, when known
    if isinstance(exc, exceptions.Throttled) and wait is not None:
        extra["wait"] = round(wait)
    response.data = error_body(code, message, **extra)
    return response


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler404: the JSON error shape under /api/, Django's page elsewhere."""
    if _is_api(request):
        return JsonResponse(
            error_body("not_found", "No such API path."), status=status.HTTP_404_NOT_FOUND
        )
    return defaults.page_not_found(request, exception)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler400 (a refused Host, a bad multipart body, ...): the error shape under /api/."""
    if _is_api(request):
        return JsonResponse(
            error_body("bad_request", "The request could not be understood."),
            status=status.HTTP_400_BAD_REQUEST,
        )
    return defaults.bad_request(request, exception)  # type: ignore[arg-type]


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: the JSON error shape under /api/, Django's page elsewhere."""
    if _is_api(request):
        return JsonResponse(
            error_body("server_error", "Something went wrong on the server."),
            status=status.HTTP_500_INTERNAL_SERVER_ERROR,
        )
    return defaults.server_error(request)
