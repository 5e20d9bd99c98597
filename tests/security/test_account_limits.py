"""Limits that protect accounts hold whatever the request carries: sign-up and
password guessing count per client address (a player's token, a session or an
`X-Forwarded-For` of the client's choosing change nothing), and guesses at one
username count against that name too, from any number of addresses."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.test import Client, override_settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.security.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def rates(**scopes: str) -> dict[str, Any]:
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {**rest["DEFAULT_THROTTLE_RATES"], **scopes}
    return rest


def register(client: Client, username: str, **extra: Any) -> int:
    body = json.dumps({"username": username, "password": PASSWORD})
    response = client.post("/api/auth/register/", body, content_type="application/json", **extra)
    return response.status_code


def tokens_of(make_player: Callable[..., AbstractBaseUser], *names: str) -> list[str]:
    return [Token.objects.create(user=make_player(name)).key for name in names]


def test_a_players_token_does_not_buy_more_sign_ups(make_player: Any) -> None:
    first, second = tokens_of(make_player, "mallory", "mallory2")
    client = APIClient()
    with override_settings(REST_FRAMEWORK=rates(signup="2/hour")):
        codes = [
            register(client, "n1", HTTP_AUTHORIZATION=f"Token {first}"),
            register(client, "n2", HTTP_AUTHORIZATION=f"Token {second}"),
            # A third account's token, or none, is the same address: refused.
            register(client, "n3", HTTP_AUTHORIZATION=f"Token {first}"),
            register(client, "n4"),
        ]
    assert codes == [201, 201, 429, 429]


def test_a_signed_in_browser_does_not_buy_more_sign_ups_either(make_player: Any) -> None:
    make_player("mallory")
    client = Client()
    client.login(username="mallory", password=PASSWORD)
    with override_settings(REST_FRAMEWORK=rates(signup="1/hour")):
        assert register(client, "n1") == 201
        client.login(username="n1", password=PASSWORD)
        assert register(client, "n2") == 429


def test_x_forwarded_for_written_by_the_client_does_not_pick_a_fresh_counter() -> None:
    client = APIClient()
    with override_settings(REST_FRAMEWORK=rates(signup="2/hour")):
        codes = [
            register(client, f"n{i}", HTTP_X_FORWARDED_FOR=f"198.51.100.{i}") for i in range(4)
        ]
    assert codes == [201, 201, 429, 429]


def test_ipv6_clients_are_counted_per_64_block() -> None:
    client = APIClient()
    with override_settings(REST_FRAMEWORK=rates(signup="2/hour")):
        codes = [register(client, f"n{i}", REMOTE_ADDR=f"2001:db8:1:2::{i:x}") for i in range(3)]
        other_block = register(client, "m0", REMOTE_ADDR="2001:db8:1:3::1")
    assert codes == [201, 201, 429]
    assert other_block == 201


def guess(client: Client, username: str, address: str, **extra: Any) -> int:
    body = json.dumps({"username": username, "password": "a-wrong-guess"})
    response = client.post(
        "/api/auth/token/", body, content_type="application/json", REMOTE_ADDR=address, **extra
    )
    return response.status_code


def test_guesses_at_one_name_from_many_addresses_are_limited_by_the_name(
    make_player: Any,
) -> None:
    make_player("victim")
    make_player("bystander")
    client = APIClient()
    with override_settings(REST_FRAMEWORK=rates(auth="100/min", auth_username="3/min")):
        codes = [guess(client, "victim", f"203.0.113.{i}") for i in range(5)]
        # The same name however it is written (case, full width) is the same target.
        variants = [guess(client, name, "203.0.113.99") for name in ("VICTIM", "ｖｉｃｔｉｍ")]
        other = guess(client, "bystander", "203.0.113.50")
    assert codes == [401, 401, 401, 429, 429]
    assert variants == [429, 429]
    assert other == 401


def test_guesses_spread_over_many_accounts_tokens_still_count_per_address(
    make_player: Any,
) -> None:
    make_player("victim")
    keys = tokens_of(make_player, *[f"sock{i}" for i in range(4)])
    client = APIClient()
    with override_settings(REST_FRAMEWORK=rates(auth="3/min", auth_username="100/min")):
        codes = [
            guess(client, "victim", "192.0.2.7", HTTP_AUTHORIZATION=f"Token {key}") for key in keys
        ]
    assert codes == [401, 401, 401, 429]


@pytest.mark.parametrize(
    ("path", "form"),
    [
        ("/accounts/login/", {"username": "victim", "password": "a-wrong-guess"}),
        ("/admin/login/", {"username": "victim", "password": "a-wrong-guess"}),
    ],
)
def test_the_login_forms_count_guesses_per_name_too(
    path: str, form: dict[str, str], make_player: Any
) -> None:
    make_player("victim", is_staff=True)
    client = Client()
    with override_settings(REST_FRAMEWORK=rates(auth="100/min", auth_username="2/min")):
        codes = [
            client.post(path, form, REMOTE_ADDR=f"203.0.113.{i}").status_code for i in range(3)
        ]
        # The API's guesses at the same name draw on the same counter.
        api = guess(APIClient(), "victim", "203.0.113.200")
    assert codes == [200, 200, 429]
    assert api == 429


def test_the_session_login_api_counts_per_name_too(make_player: Any) -> None:
    make_player("victim")
    client = APIClient(enforce_csrf_checks=False)
    with override_settings(REST_FRAMEWORK=rates(auth="100/min", auth_username="2/min")):
        codes = [
            client.post(
                "/api/auth/login/",
                json.dumps({"username": "victim", "password": "nope"}),
                content_type="application/json",
                REMOTE_ADDR=f"203.0.113.{i}",
            ).status_code
            for i in range(3)
        ]
    assert codes == [401, 401, 429]


def test_a_right_password_after_the_name_limit_is_refused_until_the_window_ends(
    make_player: Any,
) -> None:
    make_player("victim")
    client = APIClient()
    with override_settings(REST_FRAMEWORK=rates(auth="100/min", auth_username="1/min")):
        assert guess(client, "victim", "203.0.113.1") == 401
        right = client.post(
            "/api/auth/token/",
            json.dumps({"username": "victim", "password": PASSWORD}),
            content_type="application/json",
            REMOTE_ADDR="203.0.113.2",
        )
    assert right.status_code == 429
    assert right.json()["error"]["code"] == "throttled"
    assert 0 < right.json()["error"]["wait"] <= 60
