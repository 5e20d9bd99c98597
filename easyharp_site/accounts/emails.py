"""A player's e-mail address: optional, and used for nothing until a link confirms it.

An address given at sign-up or later waits in `Account.email_pending`, and a
link goes to it. Opening the link (and confirming) makes it the player's
address (`User.email`), the only one anything is ever sent to besides that
link. The link is signed with Django's `signing` (SECRET_KEY) and names the
request it answers: it stops working once used, when a newer address is
asked for, or after `EMAIL_VERIFY_TIMEOUT` seconds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core import signing
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone
from rest_framework import status

from easyharp_site.accounts import mail
from easyharp_site.accounts.models import Account
from easyharp_site.accounts.selectors import email_delivery_failed_key
from easyharp_site.errors import ServiceError

_SALT = "easyharp_site.accounts.emails.verify"
EMAIL_MAX_LENGTH = 254


def email_normalize(email: str) -> str:
    """The address as stored: trimmed, with its domain in lower case; `invalid_email` if it
    is not an address."""
    email = get_user_model().objects.normalize_email(email.strip())
    try:
        if len(email) > EMAIL_MAX_LENGTH:
            raise ValidationError("too long")
        validate_email(email)
    except ValidationError:
        raise ServiceError("invalid_email", "This is not an e-mail address.") from None
    return email


def _digest(email: str) -> str:
    return hashlib.sha256(email.casefold().encode()).hexdigest()[:16]


def email_change_request(*, player: User, email: str, link: Callable[[str], str]) -> str | None:
    """Ask to use `email`: keep it pending and mail it a confirming link; returns it.

    `link(token)` makes the absolute address of the page the link opens.
    Asking for the confirmed address again drops any pending one and sends
    nothing (returns None).
    """
    email = email_normalize(email)
    if player.email and player.email.casefold() == email.casefold():
        Account.objects.filter(player=player).update(email_pending="", email_requested_at=None)
        return None
    return _email_pending_store(player=player, email=email, link=link)


@transaction.atomic
def _email_pending_store(*, player: User, email: str, link: Callable[[str], str]) -> str:
    account, _ = Account.objects.select_for_update().get_or_create(player=player)
    account.email_pending = email
    account.email_requested_at = timezone.now()
    account.save(update_fields=["email_pending", "email_requested_at"])
    token = signing.dumps(
        {"p": player.pk, "r": account.email_requested_at.isoformat(), "e": _digest(email)},
        salt=_SALT,
    )
    message = mail.mail_render(
        to=email,
        template="accounts/mail/email_verify",
        context={
            "username": player.get_username(),
            "link": link(token),
            "days": max(1, round(settings.EMAIL_VERIFY_TIMEOUT / 86400)),
        },
    )
    mail.mail_queue(message, failure_key=email_delivery_failed_key(player.pk))
    return email


def _invalid_link() -> ServiceError:
    return ServiceError(
        "invalid_link",
        "This link does not work: it has expired, has been used, or a newer address was "
        "asked for. Ask for a new one from your account page.",
        status_code=status.HTTP_400_BAD_REQUEST,
    )


def _link_data(token: str) -> dict[str, Any]:
    try:
        data = signing.loads(token, salt=_SALT, max_age=settings.EMAIL_VERIFY_TIMEOUT)
    except signing.BadSignature:  # SignatureExpired too
        raise _invalid_link() from None
    if not isinstance(data, dict) or not {"p", "r", "e"} <= data.keys():
        raise _invalid_link()
    return data


def _pending_of_link(data: dict[str, Any], *, lock: bool) -> Account:
    accounts = Account.objects.select_related("player")
    if lock:
        accounts = accounts.select_for_update()
    account = accounts.filter(
        player_id=data["p"], player__is_active=True, deleted_at__isnull=True
    ).first()
    if (
        account is None
        or not account.email_pending
        or account.email_requested_at is None
        or account.email_requested_at.isoformat() != data["r"]
        or _digest(account.email_pending) != data["e"]
    ):
        raise _invalid_link()
    return account


def email_link_read(*, token: str) -> tuple[User, str]:
    """(player, address) a confirming link would confirm, or an `invalid_link` error."""
    account = _pending_of_link(_link_data(token), lock=False)
    return account.player, account.email_pending


@transaction.atomic
def email_verify(*, token: str) -> User:
    """Confirm the address of a link: it becomes the player's address. Works once."""
    account = _pending_of_link(_link_data(token), lock=True)
    player = account.player
    player.email = account.email_pending
    player.save(update_fields=["email"])
    account.email_pending = ""
    account.email_requested_at = None
    account.save(update_fields=["email_pending", "email_requested_at"])
    return player


@transaction.atomic
def email_remove(*, player: User) -> None:
    """Forget the player's address, confirmed and pending (no reset by e-mail after this)."""
    player.email = ""
    player.save(update_fields=["email"])
    Account.objects.filter(player=player).update(email_pending="", email_requested_at=None)
