"""The absolute addresses of the pages that account mails link to.

Built from the site's configured address (`settings.SITE_URL`), never from the
request that asked: its Host header is the client's to choose, and a link in a
mail must open this site whatever the request said.
"""

from __future__ import annotations

from django.urls import reverse

from easyharp_site.site import site_url


def email_verify_link(token: str) -> str:
    """The page that confirms an e-mail address."""
    return site_url(reverse("email-verify", args=[token]))


def reset_link(uid: str, token: str) -> str:
    """The page that sets a new password (Django's reset confirmation)."""
    return site_url(reverse("password-reset-confirm", args=[uid, token]))


def reminders_stop_link(token: str) -> str:
    """The page that stops a player's reminder mails (and takes RFC 8058's one-click POST)."""
    return site_url(reverse("reminders-stop", args=[token]))
