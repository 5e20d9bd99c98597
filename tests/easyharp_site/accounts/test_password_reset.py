"""A forgotten password: a link by e-mail, a new password, every old session out.

The reset mail goes through a real SMTP server (aiosmtpd on loopback); the
tests follow its link as a browser and as an API client would.
"""

from __future__ import annotations

import datetime
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.fixtures import WIN_LOG, client_for, submit
from tests.mailserver import MailServer, body_of, link_in

from .conftest import NEW_PASSWORD, PASSWORD

pytestmark = pytest.mark.django_db(transaction=True)


def ask_reset(client: APIClient, email: str, **headers: str) -> Any:
    return client.post("/api/auth/password/reset/", {"email": email}, format="json", **headers)


def uid_and_token(link: str) -> tuple[str, str]:
    *_, uid, token, _end = urlsplit(link).path.split("/")
    return uid, token


@pytest.fixture
def carol(make_player: Any) -> Any:
    """A player with a confirmed address."""
    player = make_player("carol")
    player.email = "carol@example.org"
    player.save()
    return player


def test_the_mailed_link_opens_a_page_that_sets_a_new_password_and_signs_in(
    carol: Any, anon: APIClient, smtp: MailServer, daily: Any
) -> None:
    old_session = Client()
    old_session.force_login(carol)
    old_token = client_for(carol)

    response = ask_reset(anon, "CAROL@example.org")

    assert response.status_code == 202
    message = smtp.receive()
    assert message["To"] == "carol@example.org"
    assert "carol" in body_of(message)
    link = link_in(message)
    assert link.startswith(f"{settings.SITE_URL}/accounts/reset/")

    browser = Client()
    opened = browser.get(urlsplit(link).path)
    # Django hides the token from the address bar (and the Referer) at once.
    assert opened.status_code == 302 and opened["Location"].endswith("/set-password/")
    form = browser.get(opened["Location"])
    assert 'name="new_password1"' in form.text
    done = browser.post(
        opened["Location"],
        {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
        follow=True,
    )

    assert 'id="reset-done"' in done.text
    assert done.context["user"].get_username() == "carol"
    carol.refresh_from_db()
    assert carol.check_password(NEW_PASSWORD)
    # Every old session and the old API token stop working; the new session plays.
    assert old_session.get("/api/auth/me/").status_code == 401
    assert submit(old_token, WIN_LOG).status_code == 401
    assert browser.get("/api/auth/me/").json()["username"] == "carol"


def test_an_api_client_sets_the_new_password_with_the_links_uid_and_token(
    carol: Any, anon: APIClient, smtp: MailServer, daily: Any
) -> None:
    old_key = client_for(carol) and Token.objects.get(user=carol).key
    ask_reset(anon, "carol@example.org")
    uid, token = uid_and_token(link_in(smtp.receive()))

    response = anon.post(
        "/api/auth/password/reset/confirm/",
        {"uid": uid, "token": token, "password": NEW_PASSWORD},
        format="json",
    )

    assert response.status_code == 200
    body = response.json()
    assert body["username"] == "carol"
    assert body["token"] != old_key
    assert not Token.objects.filter(key=old_key).exists()
    new = APIClient()
    new.credentials(HTTP_AUTHORIZATION=f"Token {body['token']}")
    assert submit(new, WIN_LOG).status_code == 201
    signed_in = anon.post(
        "/api/auth/token/", {"username": "carol", "password": NEW_PASSWORD}, format="json"
    )
    assert signed_in.json() == {"token": body["token"]}


def test_a_used_link_is_refused(carol: Any, anon: APIClient, smtp: MailServer) -> None:
    ask_reset(anon, "carol@example.org")
    link = link_in(smtp.receive())
    uid, token = uid_and_token(link)
    first = anon.post(
        "/api/auth/password/reset/confirm/",
        {"uid": uid, "token": token, "password": NEW_PASSWORD},
        format="json",
    )
    assert first.status_code == 200

    again = anon.post(
        "/api/auth/password/reset/confirm/",
        {"uid": uid, "token": token, "password": "yet another passphrase"},
        format="json",
    )
    assert again.status_code == 400
    assert again.json()["error"]["code"] == "invalid_link"
    page = Client().get(urlsplit(link).path)
    assert page.status_code == 200 and 'id="link-problem"' in page.text
    carol.refresh_from_db()
    assert carol.check_password(NEW_PASSWORD)


def test_an_expired_link_is_refused(
    carol: Any, anon: APIClient, smtp: MailServer, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.PASSWORD_RESET_TIMEOUT = 3600
    ask_reset(anon, "carol@example.org")
    link = link_in(smtp.receive())
    uid, token = uid_and_token(link)
    later = datetime.datetime.now() + datetime.timedelta(seconds=3601)
    monkeypatch.setattr(PasswordResetTokenGenerator, "_now", lambda self: later)

    response = anon.post(
        "/api/auth/password/reset/confirm/",
        {"uid": uid, "token": token, "password": NEW_PASSWORD},
        format="json",
    )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_link"
    assert 'id="link-problem"' in Client().get(urlsplit(link).path, follow=True).text
    carol.refresh_from_db()
    assert carol.check_password(PASSWORD)


def test_the_answer_is_the_same_for_an_unknown_or_unconfirmed_address(
    carol: Any, make_player: Any, anon: APIClient, smtp: MailServer
) -> None:
    known = ask_reset(anon, "carol@example.org")
    smtp.receive()
    # An address waiting for its confirming link is not used for anything.
    dave = make_player("dave")
    client_for(dave).post("/api/auth/email/", {"email": "dave@example.org"}, format="json")
    smtp.receive()

    for address in ("nobody@example.org", "dave@example.org"):
        response = ask_reset(anon, address)
        assert (response.status_code, response.json()) == (known.status_code, known.json())
    assert smtp.nothing()


def test_no_link_goes_to_a_deactivated_player(
    carol: Any, anon: APIClient, smtp: MailServer
) -> None:
    carol.is_active = False
    carol.save()

    assert ask_reset(anon, "carol@example.org").status_code == 202
    assert smtp.nothing()


def test_the_new_password_must_pass_the_validators(
    carol: Any, anon: APIClient, smtp: MailServer
) -> None:
    ask_reset(anon, "carol@example.org")
    uid, token = uid_and_token(link_in(smtp.receive()))

    weak = anon.post(
        "/api/auth/password/reset/confirm/",
        {"uid": uid, "token": token, "password": "123"},
        format="json",
    )

    assert weak.status_code == 400
    assert weak.json()["error"]["code"] == "invalid_password"
    # The link still works for a good one.
    good = anon.post(
        "/api/auth/password/reset/confirm/",
        {"uid": uid, "token": token, "password": NEW_PASSWORD},
        format="json",
    )
    assert good.status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        {"uid": "MQ", "token": "nonsense", "password": NEW_PASSWORD},
        {"uid": "not base64!", "token": "a-b", "password": NEW_PASSWORD},
        {"uid": "OTk5OTk5OTk5OTk5OTk5OTk5OTk5", "token": "a-b", "password": NEW_PASSWORD},
    ],
)
def test_a_forged_link_is_refused(carol: Any, anon: APIClient, body: dict[str, str]) -> None:
    response = anon.post("/api/auth/password/reset/confirm/", body, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_link"


def test_the_mail_is_in_the_language_of_the_page_that_asked(carol: Any, smtp: MailServer) -> None:
    browser = Client(HTTP_ACCEPT_LANGUAGE="nl")
    page = browser.post("/accounts/password/reset/", {"email": "carol@example.org"}, follow=True)
    assert 'id="reset-sent"' in page.text

    message = smtp.receive()

    assert message["Subject"] == "Kies een nieuw wachtwoord voor Easy Harp Daily"
    assert "carol" in body_of(message)


def test_requests_are_limited_per_address_asked_for_known_or_not(
    carol: Any, smtp: MailServer, settings: Any
) -> None:
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {**rest["DEFAULT_THROTTLE_RATES"], "reset_email": "2/hour"}
    settings.REST_FRAMEWORK = rest

    for address in ("carol@example.org", "nobody@example.org"):
        answers = []
        for number in range(3):
            # A new client address each time: only the address asked for counts.
            client = APIClient(REMOTE_ADDR=f"10.0.0.{number + 1}")
            answers.append(ask_reset(client, address))
        assert [a.status_code for a in answers] == [202, 202, 429]
        assert answers[2].json()["error"]["code"] == "throttled"
        assert answers[2].json()["error"]["wait"] > 0
    # Carol got two mails, no more.
    smtp.receive()
    smtp.receive()
    assert smtp.nothing()


def test_requests_are_limited_per_client_address(
    carol: Any, smtp: MailServer, settings: Any
) -> None:
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {**rest["DEFAULT_THROTTLE_RATES"], "reset": "3/hour"}
    settings.REST_FRAMEWORK = rest
    client = APIClient(REMOTE_ADDR="10.0.0.9")

    answers = [ask_reset(client, f"someone{n}@example.org").status_code for n in range(4)]

    assert answers == [202, 202, 202, 429]
    # The page shares the limit and the counter.
    page = Client(REMOTE_ADDR="10.0.0.9").post(
        "/accounts/password/reset/", {"email": "carol@example.org"}
    )
    assert page.status_code == 429
    assert smtp.nothing()


def test_the_log_in_page_leads_to_the_reset(smtp: MailServer) -> None:
    page = Client().get("/accounts/login/")

    assert 'href="/accounts/password/reset/"' in page.text
