"""The site's one public address, from which every absolute link is built.

A request's Host header is the client's to choose among `ALLOWED_HOSTS`, with
any port (`127.0.0.1:1`, `localhost:00080`, `127.0.0.1.`): links built from it
differ per ask, and a share card keyed by it was drawn and stored again for
each variant. `settings.SITE_URL` names the address once.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings


def site_url(path: str) -> str:
    """The absolute address of `path` (a path from `reverse`, starting with `/`) on the site."""
    return f"{settings.SITE_URL}{path}"


def site_host() -> str:
    """The site's host and port as a reader would type it (a share card's footer)."""
    return urlsplit(settings.SITE_URL).netloc
