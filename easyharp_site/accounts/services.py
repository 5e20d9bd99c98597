"""Writes of accounts: register a player, check credentials, hand out API tokens."""

from __future__ import annotations

from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from rest_framework import status
from rest_framework.authtoken.models import Token

from easyharp_site.accounts.deletion import username_is_reserved
from easyharp_site.errors import ServiceError


def player_register(*, username: str, password: str) -> tuple[User, str]:
    """Create a player and their API token; returns (player, token key).

    The username must be free (compared without case); the password must pass
    Django's validators. The password is hashed before any database work: the
    hash costs about half a second of CPU, and a request holds its database
    connection from its first query to its end, so hashing after one let a
    burst of sign-ups hold every pooled connection (bench/load.py).
    """
    user_model = get_user_model()
    # Compare the name as it will be stored: create_user() applies NFKC, so
    # "ａｌｉｃｅ" (full-width) would otherwise slip past the check as "alice".
    username = user_model.normalize_username(username)
    candidate = user_model(username=username)
    try:
        validate_password(password, user=candidate)
    except ValidationError as error:
        raise ServiceError(
            "invalid_password", " ".join(error.messages), problems=list(error.messages)
        ) from None
    candidate.set_password(password)
    return _player_store(player=candidate)


@transaction.atomic
def _player_store(*, player: User) -> tuple[User, str]:
    username = player.get_username()
    taken = ServiceError(
        "username_taken",
        f"The username {username!r} is taken.",
        status_code=status.HTTP_409_CONFLICT,
    )
    if get_user_model().objects.filter(username__iexact=username).exists():
        raise taken
    # The name of a recently deleted account (accounts/deletion.py).
    if username_is_reserved(username):
        raise taken
    try:
        with transaction.atomic():
            player.save()
    except IntegrityError:
        # Two sign-ups for the same name at once: the second one loses here.
        raise taken from None
    token = Token.objects.create(user=player)
    return player, token.key


def player_authenticate(*, username: str, password: str) -> User:
    """The active player with these credentials, or an `invalid_credentials` error."""
    player = authenticate(username=username, password=password)
    if player is None:
        raise ServiceError(
            "invalid_credentials",
            "Unknown username or wrong password.",
            status_code=status.HTTP_401_UNAUTHORIZED,
        )
    return player


@transaction.atomic
def player_token_get_or_create(*, username: str, password: str) -> str:
    """The API token of the player with these credentials (created on first use)."""
    player = player_authenticate(username=username, password=password)
    token, _ = Token.objects.get_or_create(user=player)
    return str(token.key)
