"""The days over, closed from inside a server process (the embedded default).

In production compose's `closer` job runs `close_days` every few minutes. A
single `make run` has no such job, so its server process starts this thread
too (with DAILY_DEAL_PREPARE_IN_PROCESS, as `games.preparer`): it closes what
is over at once, then again a few minutes after each UTC midnight.
"""

from __future__ import annotations

import logging
import threading

from django.db import close_old_connections
from django.utils import timezone

from games.preparer import run_daily
from leaderboards.services import CLOSE_GRACE, day_close, days_to_close

logger = logging.getLogger(__name__)


def close_once() -> int:
    """Close every day that is over and not closed yet; the number closed."""
    try:
        days = days_to_close(now=timezone.now())
        for day in days:
            result = day_close(date=day)
            logger.info("%s closed: %s players, %s won", day, result.players, result.won)
    finally:
        close_old_connections()
    return len(days)


def start(stop: threading.Event | None = None) -> threading.Thread:
    """Start the background thread that closes the days over."""
    return run_daily(
        "close-days", close_once, stop=stop, after_midnight=CLOSE_GRACE.total_seconds()
    )
