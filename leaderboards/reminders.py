"""Reminder mails: the day's deal, to the players who asked for a reminder and have not
played it yet.

A player chooses the hour (UTC) on their account page or through the API
(`easyharp_site.accounts.reminders`). The `send reminders` job, every few
minutes, queues a mail to each player who, on a day whose deal is stored:

- asked for reminders, at an hour that has come (now's hour or earlier);
- was not reminded that day yet (nor passed over: a reminder set after its
  hour starts the next day);
- has a confirmed address, and is neither banned nor deleted;
- has not played the day: no ranked attempt started, no ranked game stored.

A streak at stake changes what the mail says, not whether it goes: the
player asked for it. The mail is in the language of the page where they
asked, gives the day's number and date, their streak, a link to the play page
and the signed link that stops the reminders (also in `List-Unsubscribe`, for
mail clients' one-click unsubscribe), and nothing of the deal.

Each player's mail is taken (`reminded_on`, by one conditional update) and
queued in one transaction: two runs at once mail nobody twice, and a mail the
queue refused is left to the next run. A mail not sent before the day's deal
closes is dropped. Reminders fill the mail queue to half of `EMAIL_QUEUE_MAX`
only, so a password reset asked for meanwhile still goes out.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.urls import reverse
from django.utils import timezone, translation

from easyharp_site.accounts.links import reminders_stop_link
from easyharp_site.accounts.mail import mail_queue, mail_render
from easyharp_site.accounts.models import Account
from easyharp_site.accounts.reminders import reminder_claim, reminder_token
from easyharp_site.errors import ServiceError
from easyharp_site.site import site_url
from games.models import Attempt, DailyDeal, Game
from games.selectors import daily_day_number
from leaderboards.models import PlayerStats
from leaderboards.selectors import stats_record


@dataclass(frozen=True)
class RemindersRun:
    """What a run of the job did."""

    # The day reminded of; None when today's deal is not stored yet.
    date: datetime.date | None
    queued: int
    # Due and left to the next run: the mail queue was full.
    left: int


def _due(daily: DailyDeal, now: datetime.datetime) -> QuerySet[Account]:
    """The accounts due a reminder of `daily` at `now`."""
    attempts = Attempt.objects.filter(player=OuterRef("player"), daily=daily)
    ranked = Game.objects.filter(player=OuterRef("player"), daily=daily, ranked=True)
    return (
        Account.objects.filter(
            reminder_hour__isnull=False,
            reminder_hour__lte=now.hour,
            deleted_at=None,
            player__is_active=True,
        )
        .exclude(player__email="")
        .filter(Q(reminded_on=None) | Q(reminded_on__lt=daily.date))
        .exclude(Exists(attempts))
        .exclude(Exists(ranked))
    )


def reminder_message(*, player: User, hour: int, daily: DailyDeal, streak: int) -> EmailMessage:
    """The reminder of `daily` to `player`, in the active language."""
    stop = reminders_stop_link(reminder_token(player.pk))
    return mail_render(
        to=player.email,
        template="leaderboards/mail/reminder",
        context={
            "username": player.get_username(),
            "number": daily_day_number(daily.date),
            "date": daily.date,
            "streak": streak,
            "time": f"{hour:02d}:00",
            "play_link": site_url(reverse("play")),
            "stop_link": stop,
        },
        headers={
            # RFC 2369 and RFC 8058: a mail client's unsubscribe button posts to the link.
            "List-Unsubscribe": f"<{stop}>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
            # No out-of-office answers to a mail nobody reads (RFC 3834).
            "Auto-Submitted": "auto-generated",
        },
    )


@transaction.atomic
def _remind(*, player_id: int, daily: DailyDeal, now: datetime.datetime) -> bool:
    # Asked again in the transaction: the player may have played since the list was read.
    account = _due(daily, now).select_related("player").filter(player_id=player_id).first()
    if account is None or not reminder_claim(player_id=player_id, date=daily.date):
        return False
    assert account.reminder_hour is not None  # _due
    stats = PlayerStats.objects.filter(player_id=player_id).first()
    with translation.override(account.language or settings.LANGUAGE_CODE):
        message = reminder_message(
            player=account.player,
            hour=account.reminder_hour,
            daily=daily,
            streak=stats_record(stats).current_streak(daily.date),
        )
    mail_queue(message, expires_at=daily.closes_at, queue_max=settings.EMAIL_QUEUE_MAX // 2)
    return True


def reminders_queue(*, now: datetime.datetime | None = None) -> RemindersRun:
    """Queue the reminders due at `now` (see the module's doc); running it again, or twice
    at once, queues none twice."""
    now = now or timezone.now()
    daily = DailyDeal.objects.filter(date=now.date()).first()
    if daily is None:
        return RemindersRun(date=None, queued=0, left=0)
    due = list(
        _due(daily, now).order_by("reminder_hour", "player_id").values_list("player_id", flat=True)
    )
    queued = 0
    for index, player_id in enumerate(due):
        try:
            queued += _remind(player_id=player_id, daily=daily, now=now)
        except ServiceError as error:
            if error.code != "mail_unavailable":
                raise
            return RemindersRun(date=daily.date, queued=queued, left=len(due) - index)
    return RemindersRun(date=daily.date, queued=queued, left=0)
