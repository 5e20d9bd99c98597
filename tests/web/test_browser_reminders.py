"""The daily reminder in a real browser: chosen on the account page, which says the UTC
hour in the browser's own time too, and stopped from the mail's link.

Screenshots (320 px and desktop, three languages) go to tests/artifacts/.
"""

from __future__ import annotations

import datetime
import zoneinfo
from typing import Any

import pytest

from easyharp_site.accounts.models import Account
from easyharp_site.accounts.reminders import reminder_token

from .conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

# The hint under the choice, with the local time in it, per language.
LOCAL_TIME = {
    "en": "That is {time} where you are.",
    "es": "Son las {time} donde estás.",
    "nl": "Dat is {time} bij jou.",
}
SAVED = {
    "en": "A reminder will come at 18:00 UTC",
    "es": "Te llegará un recordatorio a las 18:00 UTC",
    "nl": "Je krijgt om 18:00 UTC een herinnering",
}


@pytest.mark.parametrize("language", ["en", "es", "nl"])
@pytest.mark.parametrize("width", [320, 1280])
def test_the_reminder_is_chosen_in_utc_and_shown_in_the_players_own_time(
    site: Any, make_player: Any, language: str, width: int
) -> None:
    alice = make_player("alice")
    alice.email = "alice@example.org"
    alice.save()
    page = site(
        "/accounts/", language=language, width=width, player=alice, timezone_id="Europe/Amsterdam"
    )
    hint = page.locator("#reminder-local")
    assert hint.is_hidden()  # no hour chosen yet

    page.select_option("#id_hour", "18")

    now = datetime.datetime.now(datetime.UTC)
    eighteen = now.replace(hour=18, minute=0, second=0, microsecond=0)
    local = eighteen.astimezone(zoneinfo.ZoneInfo("Europe/Amsterdam")).strftime("%H:%M")
    page.wait_for_function(
        "text => document.getElementById('reminder-local').textContent === text",
        arg=LOCAL_TIME[language].format(time=local),
    )
    shot(page, f"reminder-choice-{language}-{width}")
    page.click("#reminder-save")
    page.wait_for_selector("#reminder-on")
    assert SAVED[language] in page.locator("ul.messages").inner_text()
    assert page.locator("#id_hour").input_value() == "18"
    # The page opened again shows the hour chosen in local time (its script writes it).
    page.wait_for_function(
        "text => document.getElementById('reminder-local').textContent === text",
        arg=LOCAL_TIME[language].format(time=local),
    )
    assert hint.is_visible()
    account = Account.objects.get(player=alice)
    assert (account.reminder_hour, account.language) == (18, language)
    assert page.errors == []


def test_the_mails_link_stops_the_reminders_with_one_button(site: Any, make_player: Any) -> None:
    alice = make_player("alice")
    Account.objects.create(player=alice, reminder_hour=7, language="nl")

    page = site(f"/accounts/reminders/stop/{reminder_token(alice.pk)}/", language="nl", width=320)
    assert Account.objects.get(player=alice).reminder_hour == 7  # opening it stops nothing
    shot(page, "reminders-stop-nl-320")
    page.click("#stop-reminders")
    page.wait_for_selector("#reminders-stopped")

    assert "geen herinneringsmails meer" in page.locator("#reminders-stopped").inner_text()
    assert Account.objects.get(player=alice).reminder_hour is None
    shot(page, "reminders-stopped-nl-320")
    assert page.errors == []
