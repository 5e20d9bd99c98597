"""Rates as the settings write them (`30/min`, `20/hour`), read strictly.

Imports nothing of the project and nothing of Django, so that the settings
module checks every `THROTTLE_*` variable with it at start-up, and the rate
limits read the same text the same way at request time.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

_PERIODS = {
    "s": 1, "sec": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hour": 3600, "hours": 3600,
    "d": 86_400, "day": 86_400, "days": 86_400,
}  # fmt: skip
_RATE = re.compile(r"(\d{1,9})/([a-z]+)", re.ASCII)


class Rate(NamedTuple):
    """At most `limit` requests in each window of `seconds`."""

    limit: int
    seconds: int


@functools.lru_cache(maxsize=64)
def rate_from_text(text: str) -> Rate:
    """The rate written `N/period`, period one of s, min, hour, day (or their long names).

    >>> rate_from_text("30/min")
    Rate(limit=30, seconds=60)
    >>> rate_from_text("30/fortnight")
    Traceback (most recent call last):
    ...
    ValueError: '30/fortnight' is not a rate: write N/s, N/min, N/hour or N/day
    """
    match = _RATE.fullmatch(text.strip())
    if match is None or match.group(2) not in _PERIODS:
        raise ValueError(f"{text!r} is not a rate: write N/s, N/min, N/hour or N/day")
    count = int(match.group(1))
    if count < 1:
        raise ValueError(f"{text!r} allows nothing: the count must be at least 1")
    return Rate(limit=count, seconds=_PERIODS[match.group(2)])
