"""Sign up, API tokens and browser sessions."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.fixtures import WIN_LOG, submit

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"


def register(client: APIClient, username: str = "carol", password: str = PASSWORD):
    return client.post(
        "/api/auth/register/", {"username": username, "password": password}, format="json"
    )


def test_signing_up_returns_a_working_token(anon, daily):
    response = register(anon)

    assert response.status_code == 201
    body = response.json()
    assert body["username"] == "carol"
    assert Token.objects.get(user__username="carol").key == body["token"]
    anon.credentials(HTTP_AUTHORIZATION=f"Token {body['token']}")
    assert submit(anon, WIN_LOG).json()["player"] == "carol"


def test_usernames_are_unique_whatever_their_case(anon):
    register(anon, "carol")

    response = register(anon, "Carol")

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "username_taken"
    assert get_user_model().objects.count() == 1


@pytest.mark.parametrize("password", ["short", "password123", "12345678901", "carol123"])
def test_weak_passwords_are_refused_by_djangos_validators(anon, password):
    response = register(anon, "carol", password)

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_password"
    assert error["problems"]
    assert not get_user_model().objects.exists()


@pytest.mark.parametrize(
    "body", [{}, {"username": "carol"}, {"username": "has space", "password": PASSWORD}]
)
def test_incomplete_or_malformed_sign_ups_are_validation_errors(anon, body):
    response = anon.post("/api/auth/register/", body, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    assert response.json()["error"]["fields"]


def test_the_token_endpoint_exchanges_credentials(anon):
    token = register(anon).json()["token"]

    response = anon.post(
        "/api/auth/token/", {"username": "carol", "password": PASSWORD}, format="json"
    )

    assert response.status_code == 200
    assert response.json() == {"token": token}


def test_the_token_endpoint_refuses_a_wrong_password(anon):
    register(anon)

    response = anon.post(
        "/api/auth/token/", {"username": "carol", "password": "wrong"}, format="json"
    )

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_credentials"


def test_a_browser_logs_in_and_out_with_a_session(daily):
    APIClient().post(
        "/api/auth/register/", {"username": "carol", "password": PASSWORD}, format="json"
    )
    browser = APIClient(enforce_csrf_checks=True)
    browser.get("/api/daily/")  # no CSRF cookie yet: the login must still need one

    refused = browser.post(
        "/api/auth/login/", {"username": "carol", "password": PASSWORD}, format="json"
    )
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "permission_denied"

    browser = APIClient()
    logged_in = browser.post(
        "/api/auth/login/", {"username": "carol", "password": PASSWORD}, format="json"
    )
    assert logged_in.status_code == 200
    assert logged_in.json() == {"username": "carol"}
    assert submit(browser, WIN_LOG).status_code == 201

    assert browser.post("/api/auth/logout/").status_code == 204
    assert submit(browser, WIN_LOG).status_code == 401


def test_login_refuses_a_wrong_password(anon):
    register(anon)

    response = anon.post(
        "/api/auth/login/", {"username": "carol", "password": "nope"}, format="json"
    )

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_credentials"
