"""The one domain error type, and the handlers that turn every error into one shape.

Every error the API returns reads `{"error": {"code": ..., "message": ..., ...}}`:
domain errors raised by services, DRF's own errors (validation, parse errors,
authentication, permissions, throttling, 404, 405) and an oversized body.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.log import log_response
from django.utils.translation import gettext
from django.views import defaults
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler


class ServiceError(Exception):
    """A request the domain refuses, with a stable code and the HTTP status it maps to.

    `extra` carries machine-readable details (for an illegal action: its index,
    token and reason code) that are merged into the error body. A message with
    `words` is a template (`"There is no game {game}."`, marked for translation
    with `gettext_noop`): the API says it in English, the pages in the
    visitor's language (`in_language`).
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        status_code: int = status.HTTP_400_BAD_REQUEST,
        expected: bool = False,
        words: Mapping[str, object] | None = None,
        retry_after: int | None = None,
        **extra: Any,
    ) -> None:
        self.template = message
        self.words = dict(words or {})
        self.message = message.format(**self.words) if words else message
        super().__init__(self.message)
        self.code = code
        self.status_code = status_code
        # Seconds a client should wait before it tries again (the `Retry-After` header).
        self.retry_after = retry_after
        # A normal answer a client asks for as a matter of course ("no attempt
        # yet"): logged at debug level, where Django logs every 4xx as a warning.
        self.expected = expected
        self.extra = extra

    def in_language(self) -> str:
        """The message in the active language: the pages' words for a refusal."""
        template = gettext(self.template)
        return template.format(**self.words) if self.words else template


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    """The JSON body of every API error."""
    return {"error": {"code": code, "message": message, **extra}}


# --- The error shape in the OpenAPI schema -------------------------------------------


def _optional(field: type[serializers.Field], help_text: str, **kwargs: Any) -> serializers.Field:
    return field(required=False, help_text=help_text, **kwargs)


# What `error_body` writes: `code` and `message` always, the rest by code. (An
# inline serializer, because a serializer class cannot declare a field named
# `fields`.)
ERROR_SCHEMA = inline_serializer(
    "Error",
    {
        "error": inline_serializer(
            "ErrorDetail",
            {
                "code": serializers.CharField(
                    help_text="Stable and machine-readable, e.g. `illegal_action`."
                ),
                "message": serializers.CharField(help_text="What went wrong, in English."),
                "fields": _optional(
                    serializers.DictField, "`invalid`: the problems of each field, by name."
                ),
                "wait": _optional(
                    serializers.IntegerField, "`throttled`: seconds to wait (as `Retry-After`)."
                ),
                "index": _optional(
                    serializers.IntegerField,
                    "`illegal_action`: the 1-based action.",
                    allow_null=True,
                ),
                "token": _optional(
                    serializers.CharField,
                    "`illegal_action`: the action as sent (its first 40 characters and "
                    "`…` when longer).",
                ),
                "reason": _optional(
                    serializers.CharField, "`illegal_action`: why the rules refuse it, in English."
                ),
                "reason_code": _optional(
                    serializers.CharField, "`illegal_action`: the stable key of `reason`."
                ),
                "params": _optional(
                    serializers.DictField,
                    "`illegal_action`: the fields of `reason` (columns, cards...).",
                    child=serializers.CharField(),
                ),
                "limit": _optional(
                    serializers.IntegerField,
                    "`too_many_follows`, `too_many_leagues`, `league_full`: the limit reached.",
                ),
                "max_actions": _optional(
                    serializers.IntegerField, "`log_too_long`: the most actions a log may hold."
                ),
                "actions": _optional(
                    serializers.IntegerField,
                    "`log_too_long`: the actions of this log; `stale_save`: of the stored log.",
                ),
                "problems": _optional(
                    serializers.ListField,
                    "`invalid_password`: each rule the password breaks.",
                    child=serializers.CharField(),
                ),
                "log": _optional(
                    serializers.CharField,
                    "`stale_save`: the attempt's stored game, to go on from.",
                    allow_blank=True,
                ),
                "version": _optional(
                    serializers.IntegerField, "`stale_save`: the attempt's stored version."
                ),
                "game": _optional(
                    serializers.IntegerField,
                    "`idempotency_key_reused`: the game stored with the key.",
                ),
                "date": _optional(
                    serializers.DateField, "`replay_locked`: the running day whose deal it is."
                ),
                "opens_at": _optional(
                    serializers.DateTimeField,
                    "`replay_locked`: when the day closes and its games open to everyone.",
                ),
            },
        )
    },
)


# What each refusal status means, with the codes any operation may answer it
# with; `error_responses` adds the operation's own codes.
_REFUSALS: dict[int, str] = {
    400: "The request is not valid: `invalid` (with `fields`), `parse_error` (a body that "
    "is not JSON), `bad_request` (a NUL character in the query or a header, a body cut "
    "short).",
    401: "`authentication_failed` (a token that is not valid), `not_authenticated` (no "
    "credentials where a signed-in player is needed).",
    403: "`permission_denied`: a write signed in by session cookie without its CSRF token.",
    404: "Not found.",
    406: "`not_acceptable`: an `Accept` header that admits none of the types the API "
    "answers in (JSON).",
    409: "A conflict with what is stored.",
    413: "`request_too_large`: a body over the server's size limit.",
    415: "`unsupported_media_type`: a body of a type the operation does not take (see its "
    "request body).",
    429: "`throttled`: too many requests of this kind; `too_many_at_once`: more requests "
    "from this address at once than the server serves side by side. `Retry-After` (and "
    "`wait`) give the seconds to wait.",
    503: "`service_unavailable`: the database cannot be reached; nothing was stored. Retry "
    "after `Retry-After` seconds.",
}
# Refusals any API request may get, whatever its operation: a NUL character in
# the query or a header (400), a token that is not valid (401), an `Accept`
# header the renderers cannot meet (406), too many at once from one address
# (429, easyharp_site.fairness), the database away (503).
ANY_REQUEST_REFUSALS = (400, 401, 406, 429, 503)
# Refusals of an operation that reads a body: a write signed in by session
# without its CSRF token (403), a body too large (413) or of a type it does
# not take (415).
BODY_REFUSALS = (403, 413, 415)


def error_responses(
    *statuses: int, codes: Mapping[int, str] | None = None
) -> dict[int, OpenApiResponse]:
    """The refusals of an API operation for `extend_schema(responses=...)`, in the `Error` shape.

    `statuses` are the operation's own (409, 413...) on top of `ANY_REQUEST_REFUSALS`;
    `codes` adds, by status, the operation's own error codes to the description.
    """
    codes = codes or {}
    return {
        status_code: OpenApiResponse(
            ERROR_SCHEMA,
            description=" ".join(filter(None, [_REFUSALS[status_code], codes.get(status_code)])),
        )
        for status_code in sorted({*ANY_REQUEST_REFUSALS, *statuses, *codes})
    }


_RETRY_AFTER = {
    "description": "Seconds to wait before trying again.",
    "required": True,
    "schema": {"type": "integer", "minimum": 0},
}


def schema_retry_after_headers(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """drf-spectacular post-processing hook: every 429 and 503 carries `Retry-After`.

    DRF sets it on a 429 from the throttle's wait, `easyharp_site.middleware`
    on the 503 of a database outage; one place documents it for every operation.
    """
    for path in result.get("paths", {}).values():
        for operation in path.values():
            for status_code in ("429", "503"):
                response = operation.get("responses", {}).get(status_code)
                if response is not None:
                    response.setdefault("headers", {})["Retry-After"] = _RETRY_AFTER
    return result


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
        refusal = Response(error_body(exc.code, exc.message, **exc.extra), status=exc.status_code)
        if exc.retry_after is not None:
            refusal["Retry-After"] = str(exc.retry_after)
        if exc.expected:
            # Logged here, at debug level, it is not logged again by Django.
            request = context["request"]
            log_response(
                "%s (%s): %s", refusal.status_text, exc.code, request.path,
                response=refusal, request=request._request, level="debug",
            )  # fmt: skip
        return refusal
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
    """handler404: the JSON error shape under /api/, elsewhere the site's page
    (`404.html`, in the visitor's language) with the view's own reason when it
    gave one (a day not come yet, say), not a URL that matched nothing."""
    if _is_api(request):
        return JsonResponse(
            error_body("not_found", "No such API path."), status=status.HTTP_404_NOT_FOUND
        )
    reason = exception.args[0] if exception is not None and exception.args else None
    message = reason if isinstance(exception, Http404) and isinstance(reason, str) else ""
    return render(request, "404.html", {"message": message}, status=status.HTTP_404_NOT_FOUND)


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
