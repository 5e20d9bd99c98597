"""Known devices: a signed cookie, set at each successful sign-in, naming the players
who signed in on this browser before.

A limit on the guesses at one username from anywhere is what keeps many
addresses from guessing one player's password, but on its own it lets anyone
lock that player out by guessing wrong on purpose. So the log-in limit counts
a request that carries this cookie for the username it tries per device
instead (OWASP's "device cookies"): strangers are slowed, while the player
still signs in from a browser they used before.

The cookie holds no name in clear, only digests of the folded names (the last
`MAX_NAMES`) and a random device id, signed with the site's key.

The device id, and a digest of the client's address, are also kept with each
game stored, so that a ranked game replaying a line played before it from the
same browser or address under another account is flagged (docs/FAIR_PLAY.md).
"""

from __future__ import annotations

import hashlib
import secrets
import unicodedata
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponseBase

COOKIE = "known_device"
_SALT = "easyharp.known-device"
MAX_AGE_SECONDS = 365 * 24 * 3600
MAX_NAMES = 5
# Set on the request by `device_remember`, read by the middleware.
_SIGNED_IN_ATTRIBUTE = "known_device_signed_in"


def username_fold(username: str) -> str:
    """A username as names are compared: NFKC, without case."""
    return unicodedata.normalize("NFKC", username).casefold()


def username_digest(username: str) -> str:
    """A fixed-size key of a username, folded (for counters and the cookie)."""
    return hashlib.sha256(username_fold(username).encode()).hexdigest()[:32]


def _cookie_value(request: HttpRequest | Any) -> dict[str, Any] | None:
    raw = request.COOKIES.get(COOKIE)
    if not raw:
        return None
    try:
        value = signing.loads(raw, salt=_SALT, max_age=MAX_AGE_SECONDS)
    except signing.BadSignature:  # forged, or older than MAX_AGE_SECONDS
        return None
    if not isinstance(value, dict) or not isinstance(value.get("names"), list):
        return None
    return value


def known_device(request: HttpRequest | Any, username: str) -> str | None:
    """The id of this browser if `username` signed in on it before, else None."""
    value = _cookie_value(request)
    if value is None or username_digest(username) not in value["names"]:
        return None
    return str(value["device"])


def device_id(request: HttpRequest | Any) -> str:
    """The id of this browser when it carries the cookie (anyone signed in on it), else ""."""
    value = _cookie_value(request)
    return str(value["device"])[:32] if value is not None else ""


def address_digest(address: str) -> str:
    """A fixed-size key of a client address as the limits count it, kept with a game
    instead of the address itself."""
    return hashlib.sha256(f"{settings.SECRET_KEY}:{address}".encode()).hexdigest()[:32]


def device_remember(request: HttpRequest, username: str) -> None:
    """Mark this browser as one `username` signed in on (the cookie is set on the answer)."""
    setattr(request, _SIGNED_IN_ATTRIBUTE, username)


class KnownDeviceMiddleware:
    """Set or renew the known-device cookie on the answer to a successful sign-in."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        username = getattr(request, _SIGNED_IN_ATTRIBUTE, None)
        if username is not None:
            value = _cookie_value(request) or {"device": secrets.token_hex(16), "names": []}
            digest = username_digest(username)
            names = [digest, *(name for name in value["names"] if name != digest)]
            response.set_cookie(
                COOKIE,
                signing.dumps({"device": value["device"], "names": names[:MAX_NAMES]}, salt=_SALT),
                max_age=MAX_AGE_SECONDS,
                secure=settings.SESSION_COOKIE_SECURE,
                httponly=True,
                samesite="Lax",
            )
        return response
