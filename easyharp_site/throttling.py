"""Rate limits for the abuse-prone endpoints: sign-up, token and game submission.

A view opts in with `throttle_scope = "signup" | "token" | "submit"`;
`ScopedThrottle` is in `DEFAULT_THROTTLE_CLASSES`, and the rates come from the
environment (`THROTTLE_SIGNUP_RATE`, ...; see settings). Counters live in the
default cache, which is Redis when `REDIS_URL` is set, so every server process
shares them.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeAlias

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from redis.exceptions import RedisError
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle

if TYPE_CHECKING:  # rest_framework.views imports this module through its settings.
    from rest_framework.request import Request
    from rest_framework.views import APIView

logger = logging.getLogger(__name__)

ViewFunction: TypeAlias = Callable[..., HttpResponseBase]

# Reads are public and cheap, so only writes are limited...
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# ...except reads expensive enough to be a lever for abuse: a replay of a
# 20,000-action game is 20,001 tables, seconds of CPU and ~15 MB of JSON.
READ_SCOPES = frozenset({"replay"})


class ScopedThrottle(ScopedRateThrottle):
    """`ScopedRateThrottle` for writes only, failing open when the cache is down.

    Differences from DRF's class, each on purpose:
    - GET/HEAD/OPTIONS are not counted (a view that also serves reads limits
      only its writes), except on the costly reads named in `READ_SCOPES`.
    - The rates are read on every request (DRF copies them once at import),
      so `override_settings` and the environment both take effect.
    - If the shared cache (Redis) is unreachable the request is let through
      and the failure logged: a cache outage must not stop players submitting
      games, and the database still validates every game.
    """

    @property
    def THROTTLE_RATES(self) -> dict[str, Any]:  # type: ignore[override]  # noqa: N802
        return api_settings.DEFAULT_THROTTLE_RATES

    def allow_request(self, request: Request, view: APIView) -> bool:
        scope = getattr(view, self.scope_attr, None)
        if request.method in _SAFE_METHODS and scope not in READ_SCOPES:
            return True
        try:
            return super().allow_request(request, view)
        except (RedisError, OSError) as exc:
            logger.warning("rate limit skipped, cache unavailable: %s", exc)
            return True


def rate_limited(scope: str) -> Callable[[ViewFunction], ViewFunction]:
    """The `scope` rate limit for a plain Django view's writes (the browser forms).

    The HTML log-in and sign-up forms reach the same passwords and accounts as
    the API's token and register endpoints, so they share those limits (and
    counters); a refused post gets a short 429 page with `Retry-After`.
    """

    def decorate(view: ViewFunction) -> ViewFunction:
        @functools.wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            throttle = ScopedThrottle()
            # DRF's throttle reads only `method`, `META` and `user`, which a
            # Django request has too.
            if not throttle.allow_request(request, SimpleNamespace(throttle_scope=scope)):  # type: ignore[arg-type]
                wait = max(1, round(throttle.wait() or 1))
                response = HttpResponse(
                    f"Too many attempts. Please try again in {wait} seconds.\n",
                    status=429,
                    content_type="text/plain; charset=utf-8",
                )
                response["Retry-After"] = str(wait)
                return response
            return view(request, *args, **kwargs)

        return wrapped

    return decorate
