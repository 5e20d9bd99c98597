"""Rate limits for the abuse-prone endpoints: sign-up, token and game submission.

A view opts in with `throttle_scope = "signup" | "token" | "submit"`;
`ScopedThrottle` is in `DEFAULT_THROTTLE_CLASSES`, and the rates come from the
environment (`THROTTLE_SIGNUP_RATE`, ...; see settings). Counters live in the
default cache, which is Redis when `REDIS_URL` is set, so every server process
shares them.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle

if TYPE_CHECKING:  # rest_framework.views imports this module through its settings.
    from rest_framework.request import Request
    from rest_framework.views import APIView

logger = logging.getLogger(__name__)

# Reads are public and cheap to cache upstream; only writes are limited.
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class ScopedThrottle(ScopedRateThrottle):
    """`ScopedRateThrottle` for writes only, failing open when the cache is down.

    Differences from DRF's class, each on purpose:
    - GET/HEAD/OPTIONS are never counted, so a view that also serves reads
      limits only its writes.
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
        if request.method in _SAFE_METHODS:
            return True
        try:
            return super().allow_request(request, view)
        except (RedisError, OSError) as exc:
            logger.warning("rate limit skipped, cache unavailable: %s", exc)
            return True
