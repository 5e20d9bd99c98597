"""The reminder job: who is reminded, and when, at several times of the day.

The job is run with the clock it is given (`reminders_queue(now=...)`); the
mails it queues are read from the `Mail` table here, and delivered by a real
SMTP server in tests/leaderboards/test_reminder_mail.py.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from django.contrib.auth.base_user import AbstractBaseUser
from django.utils import timezone

from easyharp_site.accounts.emails import email_change_request
from easyharp_site.accounts.models import Account, Mail
from easyharp_site.accounts.reminders import reminder_set
from games.models import DailyDeal
from games.services import attempt_start
from leaderboards.models import PlayerStats
from leaderboards.reminders import reminders_queue
from ranking.actions import player_ban, player_erase
from tests.fixtures import DEAL_NUMBER, at_once, play_ranked

# Days and hours matter here: `.ci/run` runs these again at the turn of a day.
pytestmark = [pytest.mark.django_db, pytest.mark.clock]


def at(day: datetime.date, hour: int, minute: int = 0) -> datetime.datetime:
    return datetime.datetime.combine(day, datetime.time(hour, minute), tzinfo=datetime.UTC)


def opted_in(player: Any, hour: int, *, day: datetime.date, language: str = "en") -> Any:
    """`player`, with a confirmed address, who asked at midnight for a reminder at `hour`."""
    player.email = f"{player.get_username()}@example.org"
    player.save(update_fields=["email"])
    reminder_set(player=player, hour=hour, language=language, now=at(day, 0))
    return player


def mails_to(player: Any) -> list[Mail]:
    return list(Mail.objects.filter(to=player.email).order_by("id"))


def test_each_player_is_reminded_once_from_their_hour_on(
    daily: DailyDeal, make_player: Any
) -> None:
    day = daily.date
    early = opted_in(make_player("early"), 9, day=day)
    late = opted_in(make_player("late"), 20, day=day)

    assert reminders_queue(now=at(day, 8, 59)).queued == 0
    run = reminders_queue(now=at(day, 9, 0))
    assert (run.date, run.queued, run.left) == (day, 1, 0)
    assert len(mails_to(early)) == 1 and mails_to(late) == []
    assert reminders_queue(now=at(day, 9, 5)).queued == 0
    assert reminders_queue(now=at(day, 19, 55)).queued == 0
    assert reminders_queue(now=at(day, 20, 5)).queued == 1
    assert reminders_queue(now=at(day, 23, 55)).queued == 0

    assert [len(mails_to(early)), len(mails_to(late))] == [1, 1]
    assert Account.objects.get(player=early).reminded_on == day


def test_the_next_day_reminds_again_once_its_deal_is_stored(
    daily: DailyDeal, make_player: Any
) -> None:
    day = daily.date
    nine = opted_in(make_player("nine"), 9, day=day)
    late = opted_in(make_player("late"), 23, day=day)
    reminders_queue(now=at(day, 23, 30))
    tomorrow = day + datetime.timedelta(days=1)

    # Past midnight, before tomorrow's deal is stored: nobody.
    assert reminders_queue(now=at(tomorrow, 9, 30)).date is None
    DailyDeal.objects.create(date=tomorrow, number=DEAL_NUMBER + 1)
    assert reminders_queue(now=at(tomorrow, 0, 5)).queued == 0  # 23:00 has not come
    assert reminders_queue(now=at(tomorrow, 9, 30)).queued == 1

    assert [len(mails_to(nine)), len(mails_to(late))] == [2, 1]


def test_a_reminder_set_after_its_hour_starts_the_next_day(
    daily: DailyDeal, alice: AbstractBaseUser
) -> None:
    day = daily.date
    alice.email = "alice@example.org"
    alice.save()
    reminder_set(player=alice, hour=9, language="en", now=at(day, 15))  # on the site now

    assert reminders_queue(now=at(day, 15, 5)).queued == 0
    # Asked at 08:00 for 09:00, it comes today.
    reminder_set(player=alice, hour=9, language="en", now=at(day + datetime.timedelta(1), 8))
    DailyDeal.objects.create(date=day + datetime.timedelta(1), number=DEAL_NUMBER + 1)
    assert reminders_queue(now=at(day + datetime.timedelta(1), 9, 0)).queued == 1


def test_nobody_who_played_today_is_reminded(daily: DailyDeal, make_player: Any) -> None:
    day = daily.date
    started = opted_in(make_player("started"), 9, day=day)
    submitted = opted_in(make_player("submitted"), 9, day=day)
    waiting = opted_in(make_player("waiting"), 9, day=day)
    attempt_start(player=started, date=day)
    play_ranked(submitted, "S")

    assert reminders_queue(now=at(day, 10)).queued == 1

    assert mails_to(started) == [] and mails_to(submitted) == []
    assert len(mails_to(waiting)) == 1


def test_no_reminder_without_a_confirmed_address_nor_to_a_banned_or_deleted_player(
    daily: DailyDeal, make_player: Any
) -> None:
    day = daily.date
    pending = make_player("pending")
    reminder_set(player=pending, hour=9, language="en", now=at(day, 0))
    email_change_request(player=pending, email="pending@example.org", link=lambda token: token)
    banned = opted_in(make_player("banned"), 9, day=day)
    player_ban(player=banned, moderator=None, reason="test")
    deleted = opted_in(make_player("deleted"), 9, day=day)
    address = deleted.email
    player_erase(player=deleted)
    stopped = opted_in(make_player("stopped"), 9, day=day)
    reminder_set(player=stopped, hour=None, language="en", now=at(day, 1))

    assert reminders_queue(now=at(day, 12)).queued == 0

    # Only the confirming link went to the pending address.
    assert [mail.subject for mail in Mail.objects.all()] == [
        "Confirm your e-mail address for Easy Harp Daily"
    ]
    assert not Mail.objects.filter(to__in=[banned.email, address]).exists()
    assert Account.objects.get(player=deleted).reminder_hour is None


def test_the_mail_names_the_streak_at_stake_or_the_deal_waiting(
    daily: DailyDeal, make_player: Any
) -> None:
    day = daily.date
    keen = opted_in(make_player("keen"), 9, day=day)
    PlayerStats.objects.create(
        player=keen, played=3, won=3, last_date=day - datetime.timedelta(1), run_length=3
    )
    broken = opted_in(make_player("broken"), 9, day=day)
    # A streak that ended two days ago stands no more.
    PlayerStats.objects.create(
        player=broken, played=5, won=5, last_date=day - datetime.timedelta(2), run_length=5
    )

    reminders_queue(now=at(day, 9))

    (to_keen,) = mails_to(keen)
    assert "your streak of 3 days is at stake" in to_keen.subject
    assert "Your streak: 3 days. Play today's deal to keep it going." in to_keen.body
    (to_broken,) = mails_to(broken)
    assert "today's deal is waiting" in to_broken.subject
    assert "Win it today to start a streak." in to_broken.body
    assert "streak: 5" not in to_broken.body


def test_a_full_mail_queue_leaves_the_rest_to_the_next_run(
    daily: DailyDeal, make_player: Any, settings: Any
) -> None:
    settings.EMAIL_QUEUE_MAX = 4  # reminders may fill half of it
    day = daily.date
    players = [opted_in(make_player(f"player{n}"), 9, day=day) for n in range(3)]

    first = reminders_queue(now=at(day, 9))
    assert (first.queued, first.left) == (2, 1)
    # The one left was not marked as reminded: it waits for room.
    assert Account.objects.filter(reminded_on=day).count() == 2
    Mail.objects.update(sent_at=timezone.now())

    second = reminders_queue(now=at(day, 9, 5))
    assert (second.queued, second.left) == (1, 0)
    assert all(len(mails_to(player)) == 1 for player in players)


def test_a_reminder_not_sent_before_its_day_closes_is_dropped(
    daily: DailyDeal, alice: AbstractBaseUser, settings: Any
) -> None:
    from easyharp_site.accounts.mail import mail_send

    opted_in(alice, 9, day=daily.date)
    reminders_queue(now=at(daily.date, 9))
    (mail,) = mails_to(alice)
    assert mail.expires_at == daily.closes_at
    Mail.objects.filter(pk=mail.pk).update(expires_at=timezone.now())

    assert mail_send(mail.pk) == "too late: dropped"
    assert not Mail.objects.filter(pk=mail.pk).exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_runs_at_once_remind_each_player_once(daily: DailyDeal, make_player: Any) -> None:
    day = daily.date
    players = [opted_in(make_player(f"player{n}"), 9, day=day) for n in range(6)]

    runs = at_once(*[lambda: reminders_queue(now=at(day, 9, 1))] * 3)

    assert [run for run in runs if isinstance(run, Exception)] == []
    assert sum(run.queued for run in runs) == 6
    assert all(len(mails_to(player)) == 1 for player in players)
