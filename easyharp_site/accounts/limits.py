"""Rate limits counted per something other than the client: an e-mail address asked for.

The per-client limits are DRF's throttles (`throttle_scope` on the API views,
`easyharp_site.throttling.rate_limited` on the forms). A password reset is
also limited per e-mail address asked for, so that nobody can fill one
mailbox with links from many client addresses; it is counted whether or not
the address belongs to anyone, so a refusal tells nothing about the address.
"""

from __future__ import annotations

import hashlib

from rest_framework import status

from easyharp_site.errors import ServiceError
from easyharp_site.throttling import identity_refusal


def email_identity(email: str) -> str:
    """A fixed-size key for an address, as the reset compares them (case-insensitively)."""
    return hashlib.sha256(email.strip().casefold().encode()).hexdigest()


def rate_check(*, scope: str, identity: str) -> None:
    """Count one request of `scope` for `identity`; a 429 `throttled` error past the rate."""
    wait = identity_refusal(scope, identity)
    if wait is None:
        return
    seconds = max(1, round(wait))
    raise ServiceError(
        "throttled",
        f"Too many requests for this address. Try again in {seconds} seconds.",
        status_code=status.HTTP_429_TOO_MANY_REQUESTS,
        wait=seconds,
    )
