"""The absolute addresses of the pages that account mails link to.

Built from the request that asked (its scheme and host, which
`ALLOWED_HOSTS` vouches for), so a link opens the site the player used.
"""

from __future__ import annotations

from django.http import HttpRequest
from django.urls import reverse


def email_verify_link(request: HttpRequest, token: str) -> str:
    """The page that confirms an e-mail address."""
    return request.build_absolute_uri(reverse("email-verify", args=[token]))


def reset_link(request: HttpRequest, uid: str, token: str) -> str:
    """The page that sets a new password (Django's reset confirmation)."""
    return request.build_absolute_uri(reverse("password-reset-confirm", args=[uid, token]))
