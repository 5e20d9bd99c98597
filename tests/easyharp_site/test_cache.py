"""The Redis cache keeps its connections across requests (easyharp_site/cache.py)."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import pytest
from django.core.cache import cache
from django.test import AsyncClient
from redis.connection import AbstractConnection

pytestmark = [pytest.mark.redis, pytest.mark.django_db]


async def test_requests_share_the_cache_connections_of_the_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each ASGI request gets a cache object of its own; with Django's backend each
    one opened a new connection to Redis (Django ticket #35651). Twenty requests
    that each count against a rate limit in the cache now open one between them."""
    opened = []
    connect = AbstractConnection.connect

    def counted(connection: AbstractConnection, *args: Any, **kwargs: Any) -> None:
        if connection._sock is None:
            opened.append(connection)
        connect(connection, *args, **kwargs)

    monkeypatch.setattr(AbstractConnection, "connect", counted)
    client = AsyncClient()
    for _ in range(20):
        # As under the ASGI server, each request starts from a context of its own.
        request = client.get("/api/players/", {"q": "ab"})
        response = await asyncio.create_task(request, context=contextvars.Context())
        assert response.status_code == 200
    assert len(opened) <= 1


def test_the_cache_reads_and_writes_through_the_shared_pool() -> None:
    cache.set("eh-cache-test-key", 41, 30)
    assert cache.incr("eh-cache-test-key") == 42
    assert cache.get("eh-cache-test-key") == 42
