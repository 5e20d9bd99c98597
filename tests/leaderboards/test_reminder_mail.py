"""A reminder from end to end: asked for on the account page, sent by the job through a
real SMTP server (aiosmtpd on loopback), stopped by one POST to its List-Unsubscribe
link, as a mail client's one-click unsubscribe does (RFC 8058).

The clock is set to a moment of today (`clock`), so that the hour chosen has
or has not come whatever time the tests run at.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from email.message import EmailMessage
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.core import signing
from django.test import Client
from django.utils import timezone
from django.utils.formats import date_format

from easyharp_site.accounts.models import Account
from games.models import DailyDeal
from leaderboards import tasks
from leaderboards.models import PlayerStats
from tests.fixtures import play_ranked
from tests.mailserver import LINK, MailServer, body_of

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch, daily: DailyDeal) -> Callable[..., None]:
    """Set the clock to `hour:minute` (UTC) of today, or of `days` later."""

    def set_to(hour: int, minute: int = 0, *, days: int = 0) -> None:
        day = daily.date + datetime.timedelta(days=days)
        moment = datetime.datetime.combine(day, datetime.time(hour, minute), tzinfo=datetime.UTC)
        monkeypatch.setattr(timezone, "now", lambda: moment)

    return set_to


def confirmed(player: Any) -> Any:
    player.email = f"{player.get_username()}@example.org"
    player.save(update_fields=["email"])
    return player


def ask_for_a_reminder(player: Any, hour: int, language: str = "en") -> Client:
    """The player asks for a reminder on the account page, in `language`."""
    browser = Client(HTTP_ACCEPT_LANGUAGE=language)
    browser.force_login(player)
    answer = browser.post("/accounts/reminder/", {"hour": str(hour)})
    assert answer.status_code == 302
    return browser


def links_in(message: EmailMessage) -> list[str]:
    return LINK.findall(body_of(message))


def unsubscribe_link(message: EmailMessage) -> str:
    # A long header is folded onto its next line; unfolded, it starts with a blank.
    header = message["List-Unsubscribe"].strip()
    match = re.fullmatch(r"<(https?://\S+)>", header)
    assert match is not None, header
    return match.group(1)


def test_a_player_who_asked_is_reminded_once_and_one_post_stops_it(
    alice: AbstractBaseUser, daily: DailyDeal, clock: Any, smtp: MailServer
) -> None:
    confirmed(alice)
    PlayerStats.objects.create(
        player=alice, played=4, won=4, last_date=daily.date - datetime.timedelta(1), run_length=4
    )
    clock(7, 30)
    ask_for_a_reminder(alice, 9)
    clock(8, 55)
    tasks.reminders_send()
    assert smtp.nothing()

    clock(9, 5)
    assert "1 reminder(s) queued" in tasks.reminders_send()
    message = smtp.receive()
    assert message["To"] == "alice@example.org"
    number = (daily.date - settings.DAILY_DEAL_FIRST_DATE).days + 1
    assert message["Subject"] == f"Easy Harp Daily #{number}: your streak of 4 days is at stake"
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    stop = unsubscribe_link(message)
    assert stop.startswith(f"{settings.SITE_URL}/accounts/reminders/stop/")
    text = body_of(message)
    assert f"Easy Harp Daily #{number}, the deal of {date_format(daily.date)}, is waiting" in text
    assert "Your streak: 4 days. Play today's deal to keep it going." in text
    assert "at 09:00 UTC" in text
    assert links_in(message) == [f"{settings.SITE_URL}/play/", stop]
    # Nothing of the deal: no code, no card (the links aside).
    words = LINK.sub("", text)
    assert daily.deal_code not in words and not re.search(r"\b[2-9TJQKA][SHDC]\b", words)

    # The job again, later the same day: no second mail.
    clock(9, 10)
    assert "0 reminder(s) queued" in tasks.reminders_send()
    clock(22, 0)
    tasks.reminders_send()
    assert smtp.nothing()

    # One POST, no cookie, no CSRF token, as a mail client sends it.
    client = Client(enforce_csrf_checks=True)
    answer = client.post(
        urlsplit(stop).path,
        "List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded",
    )
    assert answer.status_code == 200
    assert 'id="reminders-stopped"' in answer.text
    assert Account.objects.get(player=alice).reminder_hour is None

    # Tomorrow at nine: nothing.
    tomorrow = daily.date + datetime.timedelta(1)
    DailyDeal.objects.create(date=tomorrow, number=daily.number + 1)
    clock(9, 5, days=1)
    assert "0 reminder(s) queued" in tasks.reminders_send()
    assert smtp.nothing()


def test_a_player_who_played_gets_no_reminder(
    alice: AbstractBaseUser, bob: AbstractBaseUser, daily: DailyDeal, clock: Any, smtp: MailServer
) -> None:
    clock(7)
    for player in (confirmed(alice), confirmed(bob)):
        ask_for_a_reminder(player, 9)
    clock(8, 0)
    play_ranked(alice, "S")

    clock(9, 1)
    tasks.reminders_send()

    message = smtp.receive()
    assert message["To"] == "bob@example.org"
    assert "today's deal is waiting" in message["Subject"]
    assert smtp.nothing()


def test_the_mail_is_in_the_language_of_the_page_where_it_was_asked_for(
    alice: AbstractBaseUser, daily: DailyDeal, clock: Any, smtp: MailServer
) -> None:
    clock(6)
    ask_for_a_reminder(confirmed(alice), 7, language="es")

    clock(7, 0)
    tasks.reminders_send()

    message = smtp.receive()
    assert "el reparto de hoy te espera" in message["Subject"]
    text = body_of(message)
    assert "Hola, alice:" in text and "Gánalo hoy para empezar una racha." in text
    assert "Para dejar de recibirlos, abre este enlace:" in text


def test_a_forged_or_garbled_link_is_refused_and_changes_nothing(
    alice: AbstractBaseUser, daily: DailyDeal, clock: Any, smtp: MailServer
) -> None:
    clock(6)
    ask_for_a_reminder(confirmed(alice), 7)
    clock(7, 0)
    tasks.reminders_send()
    stop = urlsplit(unsubscribe_link(smtp.receive())).path
    token = stop.rstrip("/").rsplit("/", 1)[1]
    # Another player's id under alice's signature, a signature cut short, a token of
    # another kind of link (the same signer, another salt).
    forged = ":".join([signing.b64_encode(b"%d" % (alice.pk + 1)).decode(), *token.split(":")[1:]])
    other_salt = signing.dumps(alice.pk, salt="easyharp_site.accounts.emails.verify")
    for bad in (forged, token[:-3], "nothing", other_salt):
        for method in ("get", "post"):
            answer = getattr(Client(), method)(f"/accounts/reminders/stop/{bad}/")
            assert answer.status_code == 400, (bad, method)
            assert 'id="link-problem"' in answer.text
            assert "This link is not whole, or was changed" in answer.text

    assert Account.objects.get(player=alice).reminder_hour == 7
    # The link as mailed still works.
    assert Client().post(stop).status_code == 200
    assert Account.objects.get(player=alice).reminder_hour is None
