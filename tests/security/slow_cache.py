"""Cache backends that answer every call a little late, as a busy Redis does.

A counter kept by reading, changing and writing back is lost under a parallel
burst as soon as calls take any time; one kept with atomic increments is not.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache

DELAY_SECONDS = 0.003


def _late(name: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        time.sleep(DELAY_SECONDS)
        return getattr(super(_Slow, self), name)(*args, **kwargs)

    return method


class _Slow:
    """Every call a counter makes (read, write, create, increment) answers late."""

    get = _late("get")
    set = _late("set")
    add = _late("add")
    incr = _late("incr")


class SlowLocMemCache(_Slow, LocMemCache):
    pass


class SlowRedisCache(_Slow, RedisCache):
    pass
