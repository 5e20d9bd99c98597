"""A forgotten password in a real browser: the log-in page, the mail, a new password, a game.

The same uvicorn and Chromium as `test_browser.py`, with the server's mail
going to a real SMTP server (aiosmtpd on loopback) that the test reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
from django.conf import settings
from django.test import override_settings

from games.models import Game
from tests.fixtures import WIN
from tests.mailserver import MailServer, body_of, link_in, mail_server
from tests.web.test_browser import play_keys, start_ranked

from .conftest import PASSWORD, _serve_in_child, serving, shot

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

NEW_PASSWORD = "a brand new passphrase"

# The browser and the page fixtures (`browser`, `site`) are the other browser
# tests' (conftest.py); `site` serves from this module's `server`.


@pytest.fixture(scope="module")
def smtp_server() -> Iterator[MailServer]:
    # The mail the server queues is sent by the jobs this process runs
    # (`receive`), so this process sends to the SMTP server too.
    with mail_server() as server, override_settings(**server.settings):
        yield server


def _serve_with_mail(mail: dict[str, Any]) -> None:
    _serve_in_child()
    for name, value in mail.items():
        setattr(settings, name, value)


@pytest.fixture(scope="module")
def server(django_db_setup: None, django_db_blocker: Any, smtp_server: MailServer) -> Iterator[str]:
    """The site's server (conftest.py's), sending its mail to `smtp_server`."""
    with serving(django_db_blocker, partial(_serve_with_mail, smtp_server.settings)) as address:
        yield address


def test_a_forgotten_password_is_reset_by_mail_and_the_player_plays_on(
    site: Any, server: str, make_player: Any, smtp_server: MailServer
) -> None:
    alice = make_player("alice")
    alice.email = "alice@example.org"
    alice.save()

    page = site("/play/")
    page.click("#login-link")
    page.click("#forgot-password")
    page.fill("input[name=email]", "alice@example.org")
    page.click("form.account-form button[type=submit]")
    page.wait_for_selector("#reset-sent")
    shot(page, "password-reset-sent")

    message = smtp_server.receive()
    assert message["To"] == "alice@example.org"
    assert "alice" in body_of(message)
    # Mail links name the site's one configured address (SITE_URL); here the
    # site is this test's server.
    mailed = link_in(message)
    assert mailed.startswith(f"{settings.SITE_URL}/accounts/reset/")
    link = f"http://{server}{mailed.removeprefix(settings.SITE_URL)}"

    page.goto(link)
    page.wait_for_url(re.compile(r"/set-password/$"))
    page.fill("input[name=new_password1]", NEW_PASSWORD)
    page.fill("input[name=new_password2]", NEW_PASSWORD)
    shot(page, "password-reset-new-password")
    page.click("form.account-form button[type=submit]")
    page.wait_for_selector("#reset-done")
    assert page.inner_text("#account-link") == "alice"  # signed in

    # The play page starts the ranked attempt with its start step.
    page.click("#play-now")
    page.wait_for_url(re.compile(r"/play/"))
    start_ranked(page)
    play_keys(page, WIN["log"])
    page.wait_for_selector("#my-rank")
    assert "Rank 1 of 1" in page.inner_text("#my-rank")
    game = Game.objects.get()
    assert (game.player.username, game.won, game.ranked) == ("alice", True, True)
    alice.refresh_from_db()
    assert alice.check_password(NEW_PASSWORD) and not alice.check_password(PASSWORD)

    # The link worked once.
    again = site("/")
    again.goto(link)
    again.wait_for_selector("#link-problem")
