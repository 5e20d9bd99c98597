"""Receivers of accounts: sign-ins stamp their session's generation, sign-outs close their
session's sockets, and every save of a player keeps their look-alike name keys in step
with their name and ends their access when it gives them a new password or deactivates
them."""

from __future__ import annotations

from functools import partial
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.auth.signals import user_logged_in, user_logged_out
from django.db import transaction
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver
from django.http import HttpRequest

from easyharp_site.accounts.live import player_sessions_ended
from easyharp_site.accounts.services import player_name_keys_store
from easyharp_site.accounts.sessions import player_access_end, session_stamp
from easyharp_site.devices import device_remember


@receiver(user_logged_in, dispatch_uid="accounts.session_stamp")
def session_signed_in(*, request: HttpRequest | None, user: User, **_: Any) -> None:
    """Every sign-in, by any door (pages, API, admin, tests), stamps its session's generation."""
    if request is not None and hasattr(request, "session"):
        session_stamp(session=request.session, player=user)


@receiver(user_logged_out, dispatch_uid="accounts.session_sockets_close")
def session_signed_out(*, request: HttpRequest | None, user: User | None, **_: Any) -> None:
    """Every sign-out closes the sockets of its session.

    Django deletes the session only after this signal; it is deleted here
    first (Django's own flush then finds nothing left), so that the sockets,
    told at once, find it ended.
    """
    if user is None or request is None or not hasattr(request, "session"):
        return
    request.session.flush()
    transaction.on_commit(partial(player_sessions_ended, player_id=user.pk))


@receiver(user_logged_in, dispatch_uid="accounts.device_remember")
def device_signed_in(*, request: HttpRequest | None, user: User, **_: Any) -> None:
    """Every sign-in makes its browser a known device of the player (easyharp_site/devices.py)."""
    if request is not None:
        device_remember(request, user.get_username())


@receiver(post_save, sender=get_user_model(), dispatch_uid="accounts.player_name_keys")
def player_saved(
    sender: type[User],
    instance: User,
    created: bool,
    update_fields: frozenset[str] | None,
    **kwargs: Any,
) -> None:
    # A log-in saves `last_login` alone: the name did not change.
    if update_fields is not None and sender.USERNAME_FIELD not in update_fields:
        return
    player_name_keys_store(player=instance)


# The attribute under which `player_standing_read` notes, for `player_standing_saved`,
# whether the save being made ends the player's access.
ACCESS_ENDS = "_accounts_access_ends"
STANDING_FIELDS = frozenset({"password", "is_active"})


@receiver(pre_save, sender=get_user_model(), dispatch_uid="accounts.player_standing_read")
def player_standing_read(
    sender: type[User],
    instance: User,
    raw: bool,
    update_fields: frozenset[str] | None,
    **kwargs: Any,
) -> None:
    """Note whether this save gives the player a new password or deactivates them.

    Every way there is saves the player: our password pages and API, the
    admin's password form, `manage.py changepassword`, a ban, a deletion, code
    calling `set_password` or clearing `is_active`. One primary-key read; a
    sign-in, which saves `last_login` alone, reads nothing. A hash Django
    upgrades at a sign-in counts as a new password, as it does for sessions.
    """
    saved = STANDING_FIELDS if update_fields is None else STANDING_FIELDS & update_fields
    ends = False
    if not raw and instance.pk is not None and saved:
        stored = sender.objects.filter(pk=instance.pk).values("password", "is_active").first()
        if stored is not None:
            ends = ("password" in saved and stored["password"] != instance.password) or (
                "is_active" in saved and stored["is_active"] and not instance.is_active
            )
    setattr(instance, ACCESS_ENDS, ends)


@receiver(post_save, sender=get_user_model(), dispatch_uid="accounts.player_standing_saved")
def player_standing_saved(sender: type[User], instance: User, **kwargs: Any) -> None:
    """A new password or a deactivation, once saved, ends the player's access: their API
    token is revoked and, after commit, their sockets whose session ended close."""
    if getattr(instance, ACCESS_ENDS, False):
        setattr(instance, ACCESS_ENDS, False)
        player_access_end(player_id=instance.pk)
