"""An e-mail address: given at sign-up or later, used for nothing until its link is opened.

Every mail here goes through a real SMTP server (aiosmtpd on loopback); the
tests read it as the player would and follow its link.
"""

from __future__ import annotations

import time
import types
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from easyharp_site.accounts.models import Account
from tests.fixtures import client_for
from tests.mailserver import MailServer, body_of, link_in

pytestmark = pytest.mark.django_db(transaction=True)

SIGNUP_PASSWORD = "correct horse battery"


def register(client: APIClient, **extra: str) -> Any:
    body = {"username": "carol", "password": SIGNUP_PASSWORD, **extra}
    return client.post("/api/auth/register/", body, format="json")


def open_link(client: Client, link: str) -> Any:
    return client.get(urlsplit(link).path)


def confirm(client: Client, link: str) -> Any:
    return client.post(urlsplit(link).path)


def test_an_address_given_at_sign_up_is_confirmed_by_the_mailed_link(
    anon: APIClient, smtp: MailServer
) -> None:
    response = register(anon, email="Carol@Example.ORG")

    assert response.status_code == 201
    assert response.json()["email_pending"] == "Carol@example.org"
    carol = get_user_model().objects.get(username="carol")
    assert carol.email == ""  # nothing uses it before the link is opened

    message = smtp.receive()
    assert message["To"] == "Carol@example.org"
    assert "Confirm your e-mail address" in message["Subject"]
    assert "carol" in body_of(message)
    link = link_in(message)
    assert link.startswith(f"{settings.SITE_URL}/accounts/email/verify/")

    browser = Client()
    page = open_link(browser, link)
    assert page.status_code == 200
    assert "Carol@example.org" in page.text
    carol.refresh_from_db()
    assert carol.email == ""  # opening the link (a mail scanner may) confirms nothing

    done = confirm(browser, link)
    assert done.status_code == 200
    assert 'id="email-confirmed"' in done.text
    carol.refresh_from_db()
    assert carol.email == "Carol@example.org"
    assert Account.objects.get(player=carol).email_pending == ""


def test_a_link_works_once(anon: APIClient, smtp: MailServer) -> None:
    register(anon, email="carol@example.org")
    link = link_in(smtp.receive())
    assert confirm(Client(), link).status_code == 200

    again = confirm(Client(), link)
    assert again.status_code == 400
    assert 'id="link-problem"' in again.text
    assert open_link(Client(), link).status_code == 400


def test_an_expired_link_is_refused(
    anon: APIClient, smtp: MailServer, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.EMAIL_VERIFY_TIMEOUT = 3600
    register(anon, email="carol@example.org")
    link = link_in(smtp.receive())
    later = time.time() + 3601
    monkeypatch.setattr("django.core.signing.time", types.SimpleNamespace(time=lambda: later))

    response = confirm(Client(), link)

    assert response.status_code == 400
    assert get_user_model().objects.get(username="carol").email == ""


def test_a_signed_in_player_adds_then_changes_their_address(alice: Any, smtp: MailServer) -> None:
    client = client_for(alice)
    assert client.get("/api/auth/me/").json() == {
        "username": "alice",
        "email": None,
        "email_pending": None,
        "email_delivery_failed": False,
    }

    response = client.post("/api/auth/email/", {"email": "alice@example.org"}, format="json")
    assert response.status_code == 202
    assert response.json()["email_pending"] == "alice@example.org"
    token = urlsplit(link_in(smtp.receive())).path.split("/")[-2]
    # A client confirms through the API with the token the link holds.
    confirmed = APIClient().post("/api/auth/email/verify/", {"token": token}, format="json")
    assert confirmed.status_code == 200
    assert confirmed.json() == {"username": "alice", "email": "alice@example.org"}

    client.post("/api/auth/email/", {"email": "alice@example.net"}, format="json")
    me = client.get("/api/auth/me/").json()
    # The confirmed address stays in use until the new one is confirmed.
    assert (me["email"], me["email_pending"]) == ("alice@example.org", "alice@example.net")
    message = smtp.receive()
    assert message["To"] == "alice@example.net"
    assert confirm(Client(), link_in(message)).status_code == 200
    alice.refresh_from_db()
    assert alice.email == "alice@example.net"


def test_asking_again_replaces_the_first_link(alice: Any, smtp: MailServer) -> None:
    client = client_for(alice)
    client.post("/api/auth/email/", {"email": "alice@example.org"}, format="json")
    first = link_in(smtp.receive())
    client.post("/api/auth/email/", {"email": "alice@example.net"}, format="json")
    second = link_in(smtp.receive())

    assert confirm(Client(), first).status_code == 400
    assert confirm(Client(), second).status_code == 200
    alice.refresh_from_db()
    assert alice.email == "alice@example.net"


def test_the_account_page_changes_the_address(alice: Any, smtp: MailServer) -> None:
    browser = Client()
    browser.force_login(alice)

    response = browser.post("/accounts/email/", {"email": "alice@example.org"}, follow=True)

    assert response.status_code == 200
    assert "A link to confirm alice@example.org is on its way" in response.text
    assert 'id="email-pending"' in response.text
    assert confirm(browser, link_in(smtp.receive())).status_code == 200
    page = browser.get("/accounts/")
    assert "alice@example.org" in page.text and 'id="email-pending"' not in page.text


def test_a_player_removes_their_address(alice: Any) -> None:
    alice.email = "alice@example.org"
    alice.save()
    client = client_for(alice)

    response = client.delete("/api/auth/email/")

    assert response.status_code == 200
    assert response.json()["email"] is None
    alice.refresh_from_db()
    assert alice.email == ""


@pytest.mark.parametrize("address", ["not an address", "a@b", "x" * 250 + "@example.org", ""])
def test_what_is_not_an_address_is_refused_and_nothing_is_sent(
    alice: Any, smtp: MailServer, address: str
) -> None:
    response = client_for(alice).post("/api/auth/email/", {"email": address}, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] in {"invalid_email", "invalid"}
    assert smtp.nothing()
    assert not Account.objects.filter(player=alice).exclude(email_pending="").exists()


def test_a_sign_up_with_a_bad_address_creates_no_player(anon: APIClient) -> None:
    response = register(anon, email="nope")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_email"
    assert not get_user_model().objects.exists()


@pytest.mark.parametrize(
    ("language", "subject"),
    [
        ("es", "Confirma tu dirección de correo para Easy Harp Daily"),
        ("nl", "Bevestig je e-mailadres voor Easy Harp Daily"),
    ],
)
def test_the_mail_is_in_the_language_the_player_reads_the_site_in(
    anon: APIClient, smtp: MailServer, language: str, subject: str
) -> None:
    anon.post(
        "/api/auth/register/",
        {"username": "carol", "password": SIGNUP_PASSWORD, "email": "carol@example.org"},
        format="json",
        HTTP_ACCEPT_LANGUAGE=language,
    )

    message = smtp.receive()

    assert message["Subject"] == subject
    assert "Easy Harp Daily" in body_of(message)


def test_the_sign_up_page_takes_an_optional_address(smtp: MailServer) -> None:
    browser = Client()
    page = browser.get("/accounts/signup/")
    assert 'name="email"' in page.text

    browser.post(
        "/accounts/signup/",
        {
            "username": "dave",
            "password1": SIGNUP_PASSWORD,
            "password2": SIGNUP_PASSWORD,
            "email": "dave@example.org",
        },
    )

    assert smtp.receive()["To"] == "dave@example.org"
    without = Client().post(
        "/accounts/signup/",
        {"username": "erin", "password1": SIGNUP_PASSWORD, "password2": SIGNUP_PASSWORD},
    )
    assert without.status_code == 302
    assert smtp.nothing()


def test_email_changes_need_a_signed_in_player(anon: APIClient) -> None:
    assert anon.get("/api/auth/me/").status_code == 401
    assert (
        anon.post("/api/auth/email/", {"email": "x@example.org"}, format="json").status_code == 401
    )
    assert Client().get("/accounts/").status_code == 302
