"""Passwords: change one, or reset a forgotten one through a link sent by e-mail.

Reset links are Django's own (`default_token_generator`): a digest of the
player's password hash, last sign-in and address with a timestamp, so a link
stops working once used (the password changes), after
`PASSWORD_RESET_TIMEOUT` seconds, or when the address changes. They are sent
only to confirmed addresses (`User.email`) of active players with a
password, which is Django's own rule too.

A new password, by either way, signs out every session of the player (Django
ties sessions to the password hash; the browser that changed it stays signed
in), closes their sockets and replaces their API token: the saving of the new
password ends the player's access (`sessions.player_access_end`), and the
caller is given a new token.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.encoding import force_bytes, force_str
from django.utils.http import urlsafe_base64_decode, urlsafe_base64_encode
from rest_framework import status

from easyharp_site.accounts import limits, mail
from easyharp_site.accounts.sessions import token_replace
from easyharp_site.errors import ServiceError


def password_validate(password: str, *, player: User) -> None:
    """Django's password validators, as an `invalid_password` error listing the problems."""
    try:
        validate_password(password, user=player)
    except ValidationError as error:
        raise ServiceError(
            "invalid_password", " ".join(error.messages), problems=list(error.messages)
        ) from None


def password_set(*, player: User, password: str) -> str:
    """Give the player a new password (already validated); returns their new API token.

    Hashed before any database work, like a sign-up: the hash costs a good
    part of a second, and a transaction should not hold a connection that long.
    """
    player.set_password(password)
    return _password_store(player=player)


@transaction.atomic
def _password_store(*, player: User) -> str:
    player.save(update_fields=["password"])
    return token_replace(player=player)


def password_change(*, player: User, current_password: str, new_password: str) -> str:
    """Change the password of a signed-in player who knows it; returns their new API token."""
    if not player.check_password(current_password):
        raise ServiceError("wrong_password", "The current password is not right.")
    password_validate(new_password, player=player)
    return password_set(player=player, password=new_password)


def _reset_candidates(email: str) -> list[User]:
    users = get_user_model().objects.filter(email__iexact=email.strip(), is_active=True)
    return [user for user in users if user.has_usable_password()]


def password_reset_request(*, email: str, link: Callable[[str, str], str]) -> None:
    """Mail a reset link to every active player whose confirmed address is `email`.

    The caller answers the same whether or not any player has that address.
    `link(uid, token)` makes the absolute address of the page the link opens.
    Limited per address asked for (`reset_email`), known or not.
    """
    limits.rate_check(scope="reset_email", identity=limits.email_identity(email))
    for player in _reset_candidates(email):
        uid = urlsafe_base64_encode(force_bytes(player.pk))
        token = default_token_generator.make_token(player)
        message = mail.mail_render(
            to=player.email,
            template="accounts/mail/password_reset",
            context={
                "username": player.get_username(),
                "link": link(uid, token),
                "hours": max(1, round(settings.PASSWORD_RESET_TIMEOUT / 3600)),
            },
        )
        try:
            mail.mail_queue(message)
        except ServiceError:
            # Saying so would tell that the address is known; the answer
            # already asks to try again if no mail comes.
            continue


def player_from_uid(uid: str) -> User | None:
    """The player a reset link names (its `uid` is the base64 of their id), or None."""
    try:
        pk = int(force_str(urlsafe_base64_decode(uid)))
    except (TypeError, ValueError, OverflowError, UnicodeDecodeError):
        return None
    return get_user_model().objects.filter(pk=pk).first()


def _invalid_link() -> ServiceError:
    return ServiceError(
        "invalid_link",
        "This link does not work: it has expired or has been used. Ask for a new one.",
        status_code=status.HTTP_400_BAD_REQUEST,
    )


def reset_link_check(*, uid: str, token: str) -> User:
    """The player of a reset link that still works, or an `invalid_link` error."""
    player = player_from_uid(uid)
    if player is None or not default_token_generator.check_token(player, token):
        raise _invalid_link()
    return player


def password_reset_complete(*, uid: str, token: str, password: str) -> tuple[User, str]:
    """Set a new password through a reset link; returns (player, new API token).

    The link works once: the new password changes the digest it was made
    from. It is checked again on the locked row, after the slow hashing, so
    two requests with one link cannot both set a password.
    """
    player = reset_link_check(uid=uid, token=token)
    password_validate(password, player=player)
    player.set_password(password)
    with transaction.atomic():
        current = get_user_model().objects.select_for_update().get(pk=player.pk)
        if not default_token_generator.check_token(current, token):
            raise _invalid_link()
        current.password = player.password
        return current, _password_store(player=current)
