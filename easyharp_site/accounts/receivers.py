"""Every sign-in, by any door (pages, API, admin, tests), stamps its session's generation."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.http import HttpRequest

from easyharp_site.accounts.sessions import session_stamp


@receiver(user_logged_in, dispatch_uid="accounts.session_stamp")
def session_signed_in(*, request: HttpRequest | None, user: User, **_: Any) -> None:
    if request is not None and hasattr(request, "session"):
        session_stamp(session=request.session, player=user)
