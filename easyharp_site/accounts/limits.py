"""Rate limits counted per something other than the client: an e-mail address asked for.

The per-client limits are DRF's throttles (`throttle_scope` on the API views,
`easyharp_site.throttling.rate_limited` on the forms). A password reset is
also limited per e-mail address asked for, so that nobody can fill one
mailbox with links from many client addresses; it is counted whether or not
the address belongs to anyone, so a refusal tells nothing about the address.
"""

from __future__ import annotations

import hashlib
from types import SimpleNamespace
from typing import Any

from rest_framework import status

from easyharp_site.errors import ServiceError
from easyharp_site.throttling import ScopedThrottle

# DRF's throttles read only `method`, `META` and `user` of the request.
_WRITE = SimpleNamespace(method="POST", META={}, user=None)


class _IdentityThrottle(ScopedThrottle):
    """The scope's rate, counted for one given identity instead of the client."""

    def __init__(self, identity: str) -> None:
        super().__init__()
        self.identity = identity

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.identity}


def email_identity(email: str) -> str:
    """A fixed-size key for an address, as the reset compares them (case-insensitively)."""
    return hashlib.sha256(email.strip().casefold().encode()).hexdigest()


def rate_check(*, scope: str, identity: str) -> None:
    """Count one request of `scope` for `identity`; a 429 `throttled` error past the rate."""
    throttle = _IdentityThrottle(identity)
    if throttle.allow_request(_WRITE, SimpleNamespace(throttle_scope=scope)):  # type: ignore[arg-type]
        return
    wait = max(1, round(throttle.wait() or 1))
    raise ServiceError(
        "throttled",
        f"Too many requests for this address. Try again in {wait} seconds.",
        status_code=status.HTTP_429_TOO_MANY_REQUESTS,
        wait=wait,
    )
