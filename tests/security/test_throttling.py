"""Rate limits: per endpoint, writes only, 429 in the error shape, kept through a cache loss."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.conf import settings
from django.test import Client, override_settings

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


# A Redis that nobody listens on: every cache call fails at once.
UNREACHABLE_REDIS = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:9/0",
    }
}


def test_a_cache_outage_keeps_the_limits_in_the_process_and_says_so_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = Client()
    with override_settings(CACHES=UNREACHABLE_REDIS, REST_FRAMEWORK=rates(signup="2/hour")):
        statuses = [post(client, "/api/signup-like/").status_code for _ in range(4)]
    assert statuses == [201, 201, 429, 429]
    outage = [r for r in caplog.records if "shared cache is unavailable" in r.getMessage()]
    assert len(outage) == 1, "the outage is logged once, not per request"
    assert "counted per server process" in outage[0].getMessage()


def test_the_log_says_when_the_shared_counters_are_back(caplog: pytest.LogCaptureFixture) -> None:
    client = Client()
    with override_settings(CACHES=UNREACHABLE_REDIS, REST_FRAMEWORK=rates(signup="5/hour")):
        post(client, "/api/signup-like/")
    with override_settings(REST_FRAMEWORK=rates(signup="5/hour")):
        post(client, "/api/signup-like/")
        post(client, "/api/signup-like/")
    assert caplog.text.count("rate limits shared again") == 1


@pytest.mark.redis
def test_counters_are_shared_through_redis_as_one_expiring_integer() -> None:
    import redis

    assert settings.CACHES["default"]["BACKEND"].endswith("RedisCache")
    client = Client()
    with override_settings(REST_FRAMEWORK=rates(signup="2/hour")):
        post(client, "/api/signup-like/")
        post(client, "/api/signup-like/")
        # Another server process sees the same counter: read it straight from Redis.
        server = redis.Redis.from_url(settings.REDIS_URL)
        [key] = server.keys("*limit:signup:addr:127.0.0.1:*")
        assert int(server.get(key)) == 2
        assert 0 < server.ttl(key) <= 3601
        assert post(client, "/api/signup-like/").status_code == 429


def burst(path: str, count: int, *, window_seconds: int = 60) -> Counter[int]:
    """`count` posts released at once from as many threads; their statuses counted.

    Limits count in fixed windows (`window_seconds`, aligned on the clock): a
    burst that straddled two would rightly get twice the limit through, so it
    waits for a fresh window when less than a quarter of this one is left.
    """
    left = window_seconds - time.time() % window_seconds
    if left < window_seconds / 4:
        time.sleep(left + 0.05)
    start = threading.Barrier(count)

    def one(_: int) -> int:
        client = Client()
        start.wait()
        return post(client, path).status_code

    with ThreadPoolExecutor(max_workers=count) as pool:
        return Counter(pool.map(one, range(count)))


LOCAL_CACHE = {"default": {"BACKEND": "tests.security.slow_cache.SlowLocMemCache"}}


# The caches answer a few milliseconds late (tests/security/slow_cache.py), as a
# busy Redis does: any gap between reading and writing a counter is hit.


def test_a_parallel_burst_gets_exactly_the_limit_through_with_the_local_cache() -> None:
    with override_settings(CACHES=LOCAL_CACHE, REST_FRAMEWORK=rates(submit="30/min")):
        statuses = burst("/api/echo/", 60)
    assert statuses == Counter({200: 30, 429: 30})


@pytest.mark.redis
def test_a_parallel_burst_gets_exactly_the_limit_through_with_redis() -> None:
    redis_cache = {
        "default": {
            "BACKEND": "tests.security.slow_cache.SlowRedisCache",
            "LOCATION": settings.REDIS_URL,
        }
    }
    with override_settings(CACHES=redis_cache, REST_FRAMEWORK=rates(submit="30/min")):
        from django.core.cache import cache

        cache.clear()
        statuses = burst("/api/echo/", 60)
    assert statuses == Counter({200: 30, 429: 30})
