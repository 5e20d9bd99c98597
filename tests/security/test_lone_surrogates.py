"""A lone UTF-16 surrogate (`"\\ud800"`) is valid JSON text that no encoder can write:
every JSON body and socket message holding one is refused as a 400 `parse_error` (a
socket's `invalid_json`), counted by the limits like any other request."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from django.test import Client

from easyharp_site import throttling
from easyharp_site.sockets import MessageRefused, client_message
from tests.security.conftest import assert_error_shape

LONE = '"x\\ud800"'


def post(client: Client, path: str, body: str, **extra: Any) -> Any:
    return client.post(path, body, content_type="application/json", **extra)


@pytest.mark.django_db
def test_a_username_with_a_lone_surrogate_is_a_400_in_the_error_shape(player: Any) -> None:
    response = post(
        Client(raise_request_exception=False),
        "/api/auth/token/",
        f'{{"username": {LONE}, "password": "p"}}',
    )

    assert response.status_code == 400
    assert assert_error_shape(response.json())["code"] == "parse_error"


@pytest.mark.django_db
def test_refused_sign_ins_with_a_lone_surrogate_are_counted_by_the_limit(
    player: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The limits' clock stopped mid-minute: no window ends during the test.
    monkeypatch.setattr(throttling, "time", SimpleNamespace(time=lambda: 1_800_000_000 + 30.0))
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "auth": "3/min",
        },
    }
    client = Client(raise_request_exception=False)
    body = f'{{"username": {LONE}, "password": "p"}}'

    statuses = [post(client, "/api/auth/token/", body).status_code for _ in range(4)]

    assert statuses == [400, 400, 400, 429]
    refused = post(client, "/api/auth/token/", '{"username": "alice", "password": "p"}')
    assert refused.status_code == 429
    assert assert_error_shape(refused.json())["code"] == "throttled"


@pytest.mark.django_db
def test_a_log_with_a_lone_surrogate_is_a_400(api: Any, daily: Any) -> None:
    response = api.post(
        "/api/games/",
        f'{{"deal": "EH1-N-AAAAAAB", "log": ["S", {LONE}]}}',
        content_type="application/json",
    )

    assert response.status_code == 400
    assert assert_error_shape(response.json())["code"] == "parse_error"


@pytest.mark.django_db
def test_a_reminder_language_with_a_lone_surrogate_is_a_400(api: Any) -> None:
    response = api.put(
        "/api/auth/reminder/",
        f'{{"hour": 8, "language": {LONE}}}',
        content_type="application/json",
    )

    assert response.status_code == 400
    assert assert_error_shape(response.json())["code"] == "parse_error"


def test_a_surrogate_pair_is_read_as_its_character() -> None:
    assert client_message('{"name": "\\ud83c\\udccf"}', 1000) == {"name": "\U0001f0cf"}


@pytest.mark.parametrize(
    "text", [f'{{"type": "action", "n": 1, "action": {LONE}}}', f"{{{LONE}: 1}}", f"[[{LONE}]]"]
)
def test_a_socket_message_with_a_lone_surrogate_is_refused(text: str) -> None:
    with pytest.raises(MessageRefused) as refused:
        client_message(text, 1000)

    assert refused.value.code == "invalid_json"
