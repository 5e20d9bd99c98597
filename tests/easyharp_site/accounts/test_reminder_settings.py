"""The daily reminder's choice: on the account page (in English, Spanish and Dutch),
through `/api/auth/reminder/`, and its stopping link's page.

The mails themselves are in tests/leaderboards/test_reminders.py and
test_reminder_mail.py (the job lives with the streaks, in leaderboards).
"""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.test import Client

from easyharp_site.accounts.models import Account
from easyharp_site.accounts.reminders import reminder_token
from ranking.actions import player_erase
from tests.fixtures import client_for

pytestmark = pytest.mark.django_db


def text_of(response: Any) -> str:
    """The page's text, tags and scripts left out."""
    body = re.sub(r"<script.*?</script>", " ", response.content.decode(), flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def browser_of(player: Any, language: str = "en") -> Client:
    browser = Client(HTTP_ACCEPT_LANGUAGE=language)
    browser.force_login(player)
    return browser


PAGE_WORDS = {
    "en": (
        "Daily reminder",
        "No reminders. Ask for an e-mail on the days you have not played yet:",
        "Remind me at",
        "That is {time} where you are.",
        "A reminder comes at 18:00 UTC on the days you have not played yet.",
        "A reminder will come at 18:00 UTC on the days you have not played yet.",
    ),
    "es": (
        "Recordatorio diario",
        "Sin recordatorios. Pide un correo para los días que aún no hayas jugado:",
        "Recuérdamelo a las",
        "Son las {time} donde estás.",
        "Te llega un recordatorio a las 18:00 UTC los días que aún no has jugado.",
        "Te llegará un recordatorio a las 18:00 UTC los días que aún no hayas jugado.",
    ),
    "nl": (
        "Dagelijkse herinnering",
        "Geen herinneringen. Vraag een e-mail aan voor de dagen dat je nog niet gespeeld hebt:",
        "Herinner me om",
        "Dat is {time} bij jou.",
        "Je krijgt om 18:00 UTC een herinnering op de dagen dat je nog niet gespeeld hebt.",
        "Je krijgt om 18:00 UTC een herinnering op de dagen dat je nog niet gespeeld hebt.",
    ),
}


@pytest.mark.parametrize("language", ["en", "es", "nl"])
def test_the_account_page_offers_and_keeps_a_reminder_in_the_players_language(
    alice: Any, language: str
) -> None:
    heading, off, label, local, on, saved = PAGE_WORDS[language]
    alice.email = "alice@example.org"
    alice.save()
    browser = browser_of(alice, language)

    page = browser.get("/accounts/")
    said = text_of(page)
    assert heading in said and off in said and label in said
    assert 'id="reminder-off"' in page.text
    assert '<option value="" selected>' in page.text
    assert '<option value="18">18:00 UTC</option>' in page.text
    # The local time's words, for the page's script to fill in.
    assert f'data-local-time="{html.escape(local)}"' in page.text

    answer = browser.post("/accounts/reminder/", {"hour": "18"})
    assert answer.status_code == 302 and answer["Location"] == "/accounts/#daily-reminder"
    page = browser.get("/accounts/")
    said = text_of(page)
    assert on in said and saved in said  # the page, and the message of the change
    assert '<option value="18" selected>' in page.text
    assert 'id="reminder-no-email"' not in page.text
    account = Account.objects.get(player=alice)
    assert (account.reminder_hour, account.language) == (18, language)


def test_a_reminder_waits_for_a_confirmed_address_and_the_page_says_so(alice: Any) -> None:
    browser = browser_of(alice)
    browser.post("/accounts/reminder/", {"hour": "7"})

    page = browser.get("/accounts/")

    assert 'id="reminder-on"' in page.text and 'id="reminder-no-email"' in page.text
    assert Account.objects.get(player=alice).reminder_hour == 7


def test_no_hour_stops_the_reminders(alice: Any) -> None:
    browser = browser_of(alice)
    browser.post("/accounts/reminder/", {"hour": "7"})

    browser.post("/accounts/reminder/", {"hour": ""})

    assert Account.objects.get(player=alice).reminder_hour is None
    assert "No more reminders." in text_of(browser.get("/accounts/"))


@pytest.mark.parametrize("hour", ["24", "-1", "7.5", "seven"])
def test_an_hour_that_is_not_one_is_refused_and_nothing_is_kept(alice: Any, hour: str) -> None:
    page = browser_of(alice).post("/accounts/reminder/", {"hour": hour})

    assert page.status_code == 200
    assert 'class="errorlist' in page.text
    assert not Account.objects.filter(player=alice, reminder_hour__isnull=False).exists()


def test_the_reminder_form_needs_the_csrf_token(alice: Any) -> None:
    # Unlike the stopping link, turning reminders on is the signed-in player's own act.
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)

    assert browser.post("/accounts/reminder/", {"hour": "7"}).status_code == 403
    assert not Account.objects.filter(player=alice, reminder_hour__isnull=False).exists()


def test_the_reminder_needs_a_signed_in_player(db: None) -> None:
    answer = Client().post("/accounts/reminder/", {"hour": "7"})
    assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/")


class TestTheApi:
    def test_a_new_account_has_no_reminder(self, alice: Any) -> None:
        answer = client_for(alice).get("/api/auth/reminder/")
        assert answer.status_code == 200
        assert answer.json() == {"hour": None, "language": "", "email": None}

    def test_a_reminder_takes_the_requests_language_or_the_one_named(self, alice: Any) -> None:
        alice.email = "alice@example.org"
        alice.save()
        api = client_for(alice)

        answer = api.put(
            "/api/auth/reminder/", {"hour": 18}, format="json", HTTP_ACCEPT_LANGUAGE="nl"
        )
        assert answer.json() == {"hour": 18, "language": "nl", "email": "alice@example.org"}
        answer = api.put("/api/auth/reminder/", {"hour": 6, "language": "es"}, format="json")
        assert answer.json()["hour"] == 6 and answer.json()["language"] == "es"
        assert api.get("/api/auth/reminder/").json() == answer.json()
        assert api.put("/api/auth/reminder/", {"hour": None}, format="json").json()["hour"] is None

    @pytest.mark.parametrize(
        "body",
        [{"hour": 24}, {"hour": -1}, {"hour": "18"}, {"hour": True}, {"hour": 7.5}, {},
         {"hour": 7, "language": "fr"}],
    )  # fmt: skip
    def test_a_bad_reminder_is_refused_and_nothing_is_kept(self, alice: Any, body: Any) -> None:
        answer = client_for(alice).put("/api/auth/reminder/", body, format="json")
        assert answer.status_code == 400
        assert answer.json()["error"]["code"] == "invalid"
        assert client_for(alice).get("/api/auth/reminder/").json()["hour"] is None

    def test_it_needs_a_signed_in_player(self, db: None) -> None:
        assert client_for(None).get("/api/auth/reminder/").status_code in (401, 403)
        put = client_for(None).put("/api/auth/reminder/", {"hour": 1}, format="json")
        assert put.status_code in (401, 403)


class TestTheStoppingLink:
    def test_opening_it_shows_a_button_and_stops_nothing(self, alice: Any) -> None:
        browser_of(alice).post("/accounts/reminder/", {"hour": "7"})
        link = f"/accounts/reminders/stop/{reminder_token(alice.pk)}/"

        page = Client().get(link)

        assert page.status_code == 200
        assert 'id="stop-reminders"' in page.text and "alice" in text_of(page)
        assert Account.objects.get(player=alice).reminder_hour == 7

    def test_its_button_stops_the_reminders_in_the_players_language(self, alice: Any) -> None:
        browser_of(alice).post("/accounts/reminder/", {"hour": "7"})
        link = f"/accounts/reminders/stop/{reminder_token(alice.pk)}/"

        done = Client(enforce_csrf_checks=True).post(link, HTTP_ACCEPT_LANGUAGE="es")

        assert done.status_code == 200
        assert "Hecho: no recibirás más recordatorios." in text_of(done)
        assert Account.objects.get(player=alice).reminder_hour is None
        again = Client().get(link)
        assert 'id="stop-reminders"' not in again.text
        assert "The player alice gets no reminder mails." in text_of(again)

    def test_a_deleted_account_keeps_no_reminder(self, alice: Any) -> None:
        browser_of(alice).post("/accounts/reminder/", {"hour": "7"})

        player_erase(player=alice)

        account = Account.objects.get(player=alice)
        assert (account.reminder_hour, account.language) == (None, "")
