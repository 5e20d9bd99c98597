"""Password change, sign out everywhere and token rotation: which sessions and tokens survive."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.fixtures import WIN_LOG, client_for, submit

from .conftest import NEW_PASSWORD, PASSWORD

pytestmark = pytest.mark.django_db


def signed_in(player: Any) -> Client:
    """A browser session of the player (as if they had logged in on another device)."""
    browser = Client()
    browser.force_login(player)
    return browser


def session_api(browser: Client) -> APIClient:
    """An API client with the browser's cookies (session and CSRF), CSRF checked."""
    client = APIClient(enforce_csrf_checks=True)
    client.cookies = browser.cookies
    browser.get("/accounts/")  # sets the CSRF cookie
    client.cookies = browser.cookies
    return client


def is_signed_in(browser: Client) -> bool:
    return browser.get("/api/auth/me/").status_code == 200


# --- Password change ---------------------------------------------------------------------


def test_changing_the_password_signs_out_other_sessions_and_replaces_the_token(
    alice: Any, daily: Any
) -> None:
    here, elsewhere = signed_in(alice), signed_in(alice)
    old_token = client_for(alice)
    old_key = Token.objects.get(user=alice).key
    api = session_api(here)

    response = api.post(
        "/api/auth/password/change/",
        {"current_password": PASSWORD, "new_password": NEW_PASSWORD},
        format="json",
        HTTP_X_CSRFTOKEN=here.cookies["csrftoken"].value,
    )

    assert response.status_code == 200
    new_key = response.json()["token"]
    assert new_key != old_key
    assert is_signed_in(here)
    assert not is_signed_in(elsewhere)
    assert submit(old_token, WIN_LOG).status_code == 401
    new = APIClient()
    new.credentials(HTTP_AUTHORIZATION=f"Token {new_key}")
    assert submit(new, WIN_LOG).status_code == 201
    alice.refresh_from_db()
    assert alice.check_password(NEW_PASSWORD)


def test_a_token_client_changes_the_password_and_gets_the_new_token(alice: Any) -> None:
    client = client_for(alice)

    response = client.post(
        "/api/auth/password/change/",
        {"current_password": PASSWORD, "new_password": NEW_PASSWORD},
        format="json",
    )

    assert response.status_code == 200
    assert client.get("/api/auth/me/").status_code == 401
    client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    assert client.get("/api/auth/me/").json()["username"] == "alice"


@pytest.mark.parametrize(
    ("current", "new", "code"),
    [
        ("wrong password", NEW_PASSWORD, "wrong_password"),
        (PASSWORD, "alice123", "invalid_password"),
    ],
)
def test_a_wrong_current_password_or_a_weak_new_one_changes_nothing(
    alice: Any, current: str, new: str, code: str
) -> None:
    client = client_for(alice)
    key = Token.objects.get(user=alice).key

    response = client.post(
        "/api/auth/password/change/",
        {"current_password": current, "new_password": new},
        format="json",
    )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == code
    alice.refresh_from_db()
    assert alice.check_password(PASSWORD)
    assert Token.objects.get(user=alice).key == key


def test_the_password_page_changes_it_and_keeps_this_browser_signed_in(alice: Any) -> None:
    here, elsewhere = signed_in(alice), signed_in(alice)
    old_key = client_for(alice) and Token.objects.get(user=alice).key

    response = here.post(
        "/accounts/password/change/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
        follow=True,
    )

    assert response.status_code == 200
    assert "Your password is changed" in response.text
    assert is_signed_in(here) and not is_signed_in(elsewhere)
    assert Token.objects.get(user=alice).key != old_key


# --- Sign out everywhere ------------------------------------------------------------------


def test_signing_out_everywhere_ends_every_session_and_the_token(alice: Any, bob: Any) -> None:
    first, second, third = signed_in(alice), signed_in(alice), signed_in(alice)
    bobs = signed_in(bob)
    token = client_for(alice)
    api = session_api(first)

    response = api.post(
        "/api/auth/logout/everywhere/", HTTP_X_CSRFTOKEN=first.cookies["csrftoken"].value
    )

    assert response.status_code == 204
    assert not any(is_signed_in(browser) for browser in (first, second, third))
    assert token.get("/api/auth/me/").status_code == 401
    assert not Token.objects.filter(user=alice).exists()
    assert is_signed_in(bobs)
    # Signing in again works, and that session stays.
    again = signed_in(alice)
    assert is_signed_in(again)
    assert is_signed_in(again)  # still, on its next request


def test_a_token_client_signs_out_everywhere(alice: Any) -> None:
    browser = signed_in(alice)
    client = client_for(alice)

    assert client.post("/api/auth/logout/everywhere/").status_code == 204

    assert not is_signed_in(browser)
    assert client.get("/api/auth/me/").status_code == 401


def test_the_account_page_signs_out_everywhere(alice: Any) -> None:
    here, elsewhere = signed_in(alice), signed_in(alice)

    response = here.post("/accounts/logout/everywhere/", follow=True)

    assert response.redirect_chain[-1][0].startswith("/accounts/login/")
    assert "signed out everywhere" in response.text
    assert not is_signed_in(here) and not is_signed_in(elsewhere)


def test_a_session_api_write_needs_the_csrf_token(alice: Any) -> None:
    browser = signed_in(alice)
    api = session_api(browser)

    response = api.post("/api/auth/logout/everywhere/")

    assert response.status_code == 403
    assert is_signed_in(browser)


# --- Token rotation -----------------------------------------------------------------------


def test_rotating_the_token_replaces_it_and_keeps_sessions(alice: Any) -> None:
    browser = signed_in(alice)
    client = client_for(alice)
    old = Token.objects.get(user=alice).key

    response = client.post("/api/auth/token/rotate/")

    assert response.status_code == 200
    new = response.json()["token"]
    assert new != old and response.json()["username"] == "alice"
    assert client.get("/api/auth/me/").status_code == 401
    client.credentials(HTTP_AUTHORIZATION=f"Token {new}")
    assert client.get("/api/auth/me/").status_code == 200
    assert is_signed_in(browser)


@pytest.mark.parametrize(
    "path",
    [
        "/api/auth/token/rotate/",
        "/api/auth/logout/everywhere/",
        "/api/auth/password/change/",
        "/api/auth/delete/",
    ],
)
def test_these_need_a_signed_in_player(anon: APIClient, path: str) -> None:
    response = anon.post(path, {}, format="json")

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
