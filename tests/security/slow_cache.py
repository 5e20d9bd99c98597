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


class _Slow:
    def get(self, *args: Any, **kwargs: Any) -> Any:
        time.sleep(DELAY_SECONDS)
        return super().get(*args, **kwargs)  # type: ignore[misc]

    def set(self, *args: Any, **kwargs: Any) -> Any:
        time.sleep(DELAY_SECONDS)
        return super().set(*args, **kwargs)  # type: ignore[misc]

    def add(self, *args: Any, **kwargs: Any) -> Any:
        time.sleep(DELAY_SECONDS)
        return super().add(*args, **kwargs)  # type: ignore[misc]

    def incr(self, *args: Any, **kwargs: Any) -> Any:
        time.sleep(DELAY_SECONDS)
        return super().incr(*args, **kwargs)  # type: ignore[misc]


class SlowLocMemCache(_Slow, LocMemCache):
    pass


class SlowRedisCache(_Slow, RedisCache):
    pass
