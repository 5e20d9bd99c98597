"""Rate limits: per endpoint, writes only, 429 in the error shape, open on cache loss."""

from __future__ import annotations

import json
from unittest import mock

import pytest
from django.conf import settings
from django.test import Client, override_settings
from redis.exceptions import ConnectionError as RedisConnectionError

pytestmark = pytest.mark.urls("tests.security.urls")


def rates(**scopes: str) -> dict:
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {**rest["DEFAULT_THROTTLE_RATES"], **scopes}
    return rest


def post(client: Client, path: str, **extra: str):
    return client.post(path, json.dumps({}), content_type="application/json", **extra)


def test_every_abuse_prone_scope_has_a_rate_from_the_environment() -> None:
    configured = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    for scope in ("signup", "auth", "submit"):
        assert configured[scope], scope
    assert (
        "easyharp_site.throttling.ScopedThrottle"
        in settings.REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"]
    )


def test_the_request_over_the_rate_gets_429_in_the_error_shape() -> None:
    client = Client()
    with override_settings(REST_FRAMEWORK=rates(signup="3/hour")):
        statuses = [post(client, "/api/signup-like/").status_code for _ in range(4)]
        refused = post(client, "/api/signup-like/")
    assert statuses == [201, 201, 201, 429]
    assert refused.status_code == 429
    body = refused.json()
    assert body["error"]["code"] == "throttled"
    assert body["error"]["message"]
    assert body["error"]["wait"] > 0
    assert int(refused["Retry-After"]) > 0


def test_scopes_are_counted_separately() -> None:
    client = Client()
    with override_settings(REST_FRAMEWORK=rates(signup="1/hour", submit="1/hour")):
        assert post(client, "/api/signup-like/").status_code == 201
        assert post(client, "/api/signup-like/").status_code == 429
        assert post(client, "/api/echo/").status_code == 200


def test_clients_from_different_addresses_are_counted_separately() -> None:
    client = Client()
    with override_settings(REST_FRAMEWORK=rates(signup="1/hour")):
        assert post(client, "/api/signup-like/", REMOTE_ADDR="10.0.0.1").status_code == 201
        assert post(client, "/api/signup-like/", REMOTE_ADDR="10.0.0.1").status_code == 429
        assert post(client, "/api/signup-like/", REMOTE_ADDR="10.0.0.2").status_code == 201


def test_reads_on_a_limited_view_are_never_counted() -> None:
    client = Client()
    with override_settings(REST_FRAMEWORK=rates(submit="2/hour")):
        for _ in range(10):
            assert client.get("/api/echo/").status_code == 200
        assert post(client, "/api/echo/").status_code == 200
        assert post(client, "/api/echo/").status_code == 200
        assert post(client, "/api/echo/").status_code == 429


def test_a_cache_outage_lets_requests_through_instead_of_failing_them() -> None:
    client = Client()
    with (
        override_settings(REST_FRAMEWORK=rates(signup="1/hour")),
        mock.patch(
            "django.core.cache.cache.get",
            side_effect=RedisConnectionError("Connection refused"),
        ),
    ):
        statuses = [post(client, "/api/signup-like/").status_code for _ in range(3)]
    assert statuses == [201, 201, 201]


@pytest.mark.redis
def test_counters_are_shared_through_redis() -> None:
    from django.core.cache import cache

    assert settings.CACHES["default"]["BACKEND"].endswith("RedisCache")
    client = Client()
    with override_settings(REST_FRAMEWORK=rates(signup="2/hour")):
        post(client, "/api/signup-like/")
        post(client, "/api/signup-like/")
        history = cache.get("throttle_signup_127.0.0.1")
        assert post(client, "/api/signup-like/").status_code == 429
    assert isinstance(history, list) and len(history) == 2
