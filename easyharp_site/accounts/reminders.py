"""Reminder mails, opt-in: the hour a player chose, and the signed link that stops them.

A player asks for a mail at a UTC hour of their choice on the days they have
not played yet; the mail goes to their confirmed address only, in the
language of the page where they asked. What a reminder says and when it is
sent is the leaderboards' reminder job's (`leaderboards.reminders`: it needs
the day's games and the player's streak, which live above accounts); here
are the choice, the claim that keeps it to one mail a day, and the link.

The stopping link is signed with Django's `signing` (SECRET_KEY, a salt of
its own) and names only the player: it works for as long as the secret does,
from any device, with no session or CSRF token (RFC 8058's one-click
unsubscribe posts to it), and all it can do is stop the reminders.
"""

from __future__ import annotations

import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core import signing
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_noop
from rest_framework import status

from easyharp_site.accounts.models import Account
from easyharp_site.errors import ServiceError

_SALT = "easyharp_site.accounts.reminders.stop"
REMINDER_HOURS = range(24)


def reminder_language(language: str | None) -> str:
    """One of the site's languages: `language`'s own (`es-ES` is `es`), else the default."""
    code = (language or "").split("-")[0].lower()
    known = {code for code, _name in settings.LANGUAGES}
    return code if code in known else str(settings.LANGUAGE_CODE)


@transaction.atomic
def reminder_set(
    *, player: User, hour: int | None, language: str, now: datetime.datetime | None = None
) -> Account:
    """Remind the player at `hour` (UTC, 0-23) on the days they have not played, in
    `language`; None stops the reminders.

    A reminder set after its hour has come today starts tomorrow: the player is
    on the site right now, and needs no mail about it.
    """
    if hour is not None and hour not in REMINDER_HOURS:
        raise ServiceError("invalid", f"A reminder's hour is 0 to 23, not {hour}.")
    now = now or timezone.now()
    account, _ = Account.objects.select_for_update().get_or_create(player=player)
    account.reminder_hour = hour
    account.language = reminder_language(language)
    if hour is not None and hour <= now.hour:
        account.reminded_on = now.date()
    account.save(update_fields=["reminder_hour", "language", "reminded_on"])
    return account


def reminder_claim(*, player_id: int, date: datetime.date) -> bool:
    """Take the player's reminder of `date`, once: whether this call took it.

    One conditional update on the player's own row: of two runs at once, the
    second waits for the first's transaction and then finds the day taken. Run
    it in the transaction that queues the mail, so that a mail that could not
    be queued leaves the day to the next run.
    """
    taken = (
        Account.objects.filter(player_id=player_id, reminder_hour__isnull=False)
        .filter(Q(reminded_on=None) | Q(reminded_on__lt=date))
        .update(reminded_on=date)
    )
    return taken == 1


def reminder_token(player_id: int) -> str:
    """The signed token of the link that stops the player's reminders."""
    return signing.dumps(player_id, salt=_SALT)


def _invalid_stop_link() -> ServiceError:
    return ServiceError(
        "invalid_stop_link",
        gettext_noop(
            "This link is not whole, or was changed: open the link of the mail as it is, or "
            "turn the reminders off on your account page."
        ),
        status_code=status.HTTP_400_BAD_REQUEST,
    )


def _player_id_of(token: str) -> int:
    try:
        player_id = signing.loads(token, salt=_SALT)
    except signing.BadSignature:
        raise _invalid_stop_link() from None
    if not isinstance(player_id, int) or isinstance(player_id, bool):
        raise _invalid_stop_link()
    return player_id


def reminder_stop_read(*, token: str) -> tuple[str, bool]:
    """(username, whether they still get reminders) of a stopping link's player;
    `invalid_stop_link` for a token that was not signed here."""
    player = get_user_model().objects.filter(pk=_player_id_of(token)).first()
    if player is None:
        raise _invalid_stop_link()
    reminded = Account.objects.filter(player=player, reminder_hour__isnull=False).exists()
    return player.get_username(), reminded


def reminders_stop(*, token: str) -> None:
    """Stop the reminders of the player of a stopping link (again: nothing changes)."""
    player_id = _player_id_of(token)
    Account.objects.filter(player_id=player_id).update(reminder_hour=None)
