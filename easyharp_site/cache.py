"""Counts that every server process shares, in the default cache.

`shared_count_change` keeps a count that every server process shares (the
watchers of an attempt or of a race), and `shared_place_take` takes one of a
bounded number of places counted that way.
"""

from __future__ import annotations

from django.core.cache import cache


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
