"""Writes of accounts: register a player, check credentials, hand out API tokens."""

from __future__ import annotations

from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from rest_framework import status
from rest_framework.authtoken.models import Token

from easyharp_site.accounts.deletion import username_is_reserved
from easyharp_site.accounts.models import Account, PlayerName
from easyharp_site.accounts.names import name_problem, player_keys
from easyharp_site.accounts.passwords import password_validate
from easyharp_site.accounts.selectors import GAME_SETTINGS
from easyharp_site.errors import ServiceError


def player_register(*, username: str, password: str) -> tuple[User, str]:
    """Create a player and their API token; returns (player, token key).

    The username must be safe in a URL path, written in one script, and look
    like no other player's name (`easyharp_site.accounts.names`); the password
    must pass Django's validators. The password is hashed before any database
    work: a request holds its database connection from its first query to its
    end, so hashing after one let a burst of sign-ups hold every pooled
    connection (docs/RELIABILITY.md).
    """
    user_model = get_user_model()
    # Check the name as it will be stored: create_user() applies NFKC, so
    # "ａｌｉｃｅ" (full-width) would otherwise slip past the check as "alice".
    username = user_model.normalize_username(username)
    problem = name_problem(username)
    if problem is not None:
        raise problem
    candidate = user_model(username=username)
    password_validate(password, player=candidate)
    candidate.set_password(password)
    return _player_store(player=candidate)


@transaction.atomic
def _player_store(*, player: User) -> tuple[User, str]:
    username = player.get_username()
    lookalike = (
        PlayerName.objects.filter(key__in=player_keys(player)).select_related("player").first()
    )
    if lookalike is not None:
        other = lookalike.player.get_username()
        raise _taken(username, other)
    # The name of a recently deleted account (accounts/deletion.py).
    if username_is_reserved(username):
        raise _taken(username, username)
    try:
        with transaction.atomic():
            # Saving stores the name's look-alike keys too (receivers.player_saved).
            player.save()
    except IntegrityError:
        # Two sign-ups for the same or look-alike names at once: the second loses here.
        raise _taken(username, username) from None
    token = Token.objects.create(user=player)
    return player, token.key


def _taken(username: str, other: str) -> ServiceError:
    message = f"The username {username!r} is taken."
    if other != username:
        message = f"The username {username!r} is taken: it looks like the player name {other!r}."
    return ServiceError("username_taken", message, status_code=status.HTTP_409_CONFLICT)


def player_name_keys_store(*, player: User) -> None:
    """Store the look-alike keys of the player's name, dropping those of a former name.

    Raises `IntegrityError` when another player's name shares a key.
    """
    keys = player_keys(player)
    PlayerName.objects.filter(player=player).exclude(key__in=keys).delete()
    stored = set(PlayerName.objects.filter(player=player).values_list("key", flat=True))
    PlayerName.objects.bulk_create([PlayerName(player=player, key=key) for key in keys - stored])


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


@transaction.atomic
def account_settings_update(*, player: User, settings: dict[str, object]) -> dict[str, object]:
    """Keep the given game settings with the player's account (the others stay as
    they were) and return them all; an unknown name or value is a 400 saying which."""
    for name, value in settings.items():
        allowed = GAME_SETTINGS.get(name)
        if allowed is None:
            raise ServiceError("invalid_setting", f"There is no setting {name!r}.")
        # `True == 1` in Python: compare types too, so 1 is not taken for true.
        if not any(value == choice and type(value) is type(choice) for choice in allowed):
            choices = ", ".join(repr(choice) for choice in allowed)
            raise ServiceError(
                "invalid_setting", f"The setting {name!r} is one of {choices}, not {value!r}."
            )
    account, _created = Account.objects.select_for_update().get_or_create(player=player)
    account.settings = {**account.settings, **settings}
    account.save(update_fields=["settings"])
    return {name: account.settings[name] for name in GAME_SETTINGS if name in account.settings}
