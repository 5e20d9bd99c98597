"""Deleting an account: the player is erased, their games stay, anonymous.

Games point at their player with a protecting foreign key (a board's stored
counts must never lose a row silently), so the player's row stays, emptied:
the username becomes an anonymous tombstone (`~deleted-` and 12 random hex
digits; sign-up refuses `~`, so no one can take or imitate one), the e-mail
addresses, names and password are cleared, the account is deactivated and
marked deleted, and its API token, sessions and open sockets end (the saving of
a deactivated player ends them: `sessions.player_access_end`). Their
replays stay public but name the tombstone. `ranking.actions.player_delete`
erases the account and takes their games off every board and league, in one
transaction.

The username itself is reserved for `ACCOUNT_USERNAME_RESERVED_DAYS` days
(as a digest, not as text), so that nobody can sign up under it at once and
pass for the player who just left; after that anyone may take it.
"""

from __future__ import annotations

import datetime
import hashlib
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from easyharp_site.accounts.models import Account, ReservedUsername
from easyharp_site.errors import ServiceError

TOMBSTONE_PREFIX = "~deleted-"


def username_digest(username: str) -> str:
    """The digest a reservation keeps of a username, compared as sign-up compares names."""
    name = get_user_model().normalize_username(username).casefold()
    return hashlib.sha256(name.encode()).hexdigest()


def username_is_reserved(username: str) -> bool:
    """Whether `username` belonged to an account deleted less than the grace period ago."""
    return ReservedUsername.objects.filter(
        digest=username_digest(username), reserved_until__gt=timezone.now()
    ).exists()


def password_confirm(*, player: User, password: str) -> None:
    """Refuse a deletion whose password is not the player's."""
    if not player.check_password(password):
        raise ServiceError("wrong_password", "The password is not right.")


@transaction.atomic
def player_erase(*, player: User) -> bool:
    """Erase a player's account (see the module's doc), with the player's row locked;
    whether it did. Erasing twice changes nothing."""
    player = get_user_model().objects.select_for_update().get(pk=player.pk)
    account, _ = Account.objects.select_for_update().get_or_create(player=player)
    if account.deleted_at is not None:
        return False
    now = timezone.now()
    ReservedUsername.objects.update_or_create(
        digest=username_digest(player.get_username()),
        defaults={
            "reserved_until": now + datetime.timedelta(days=settings.ACCOUNT_USERNAME_RESERVED_DAYS)
        },
    )
    player.username = f"{TOMBSTONE_PREFIX}{secrets.token_hex(6)}"
    player.email = ""
    player.first_name = ""
    player.last_name = ""
    player.set_unusable_password()
    player.is_active = False
    player.is_staff = False
    player.is_superuser = False
    player.last_login = None
    player.save()
    player.groups.clear()
    player.user_permissions.clear()
    account.email_pending = ""
    account.email_requested_at = None
    account.settings = {}
    account.reminder_hour = None
    account.language = ""
    account.sessions_generation += 1
    account.deleted_at = now
    account.save()
    return True
