"""Django's Redis cache with one connection pool per process and server.

Django's own backend keeps its pools on the cache object, and under ASGI each
request gets a cache object of its own (the cache handler's state is per
context), so every request opened a new connection to Redis and left it to be
collected: the rate limits, the watchers' count and the account pages each
paid a TCP handshake and Redis's `HELLO` (Django ticket #35651). Here the pools
are shared by every cache object of the process; redis-py's pool resets itself
in a forked child.

`shared_count_change` keeps a count that every server process shares (the
watchers of an attempt or of a race), and `shared_place_take` takes one of a
bounded number of places counted that way.
"""

from __future__ import annotations

import threading
from typing import Any

from django.core.cache import cache
from django.core.cache.backends.redis import RedisCache, RedisCacheClient

_pools: dict[tuple[str, str], Any] = {}
_pools_lock = threading.Lock()


class SharedPoolClient(RedisCacheClient):
    def _get_connection_pool(self, write: bool) -> Any:
        client: Any = self  # Django's client has these; its type stubs do not list them
        index = client._get_connection_pool_index(write)
        servers, options = client._servers, client._pool_options
        key = (servers[index], repr(sorted(options.items())))
        pool = _pools.get(key)
        if pool is None:
            with _pools_lock:
                pool = _pools.get(key)
                if pool is None:
                    pool = client._pool_class.from_url(servers[index], **options)
                    _pools[key] = pool
        return pool


class SharedPoolRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = SharedPoolClient


def shared_count_change(key: str, delta: int, *, seconds: int) -> int:
    """Add `delta` to the count at `key` in the default cache, which every server
    process shares, and keep it `seconds` after this change; returns the count
    (never below zero: a count that expired while it was held starts again)."""
    cache.add(key, 0, seconds)
    try:
        count = cache.incr(key, delta)
    except ValueError:  # expired in between
        cache.set(key, max(0, delta), seconds)
        count = max(0, delta)
    cache.touch(key, seconds)
    return max(0, int(count))


def shared_place_take(key: str, *, limit: int, seconds: int) -> int | None:
    """Count one more at `key` (`shared_count_change`) when fewer than `limit` are
    counted; returns the count with it, or None (nothing counted) when all the
    places are taken. The place is given back with `shared_count_change(key, -1)`."""
    count = shared_count_change(key, 1, seconds=seconds)
    if count > limit:
        shared_count_change(key, -1, seconds=seconds)
        return None
    return count
