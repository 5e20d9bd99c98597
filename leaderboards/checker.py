"""The boards checked and mended from inside a server process (the embedded default).

In production compose's `board-check` job runs `check_boards --repair` every
hour. A single `make run` has no such job, so its server process starts this
thread too (with DAILY_DEAL_PREPARE_IN_PROCESS, as `leaderboards.closer`): it
checks yesterday and today at once, then every hour and after each UTC midnight.
"""

from __future__ import annotations

import logging
import threading

from django.db import close_old_connections

from games.preparer import run_daily
from leaderboards.checks import boards_check_recent
from leaderboards.services import CLOSE_GRACE

logger = logging.getLogger(__name__)


def check_once() -> int:
    """Check and mend yesterday's and today's boards; the number of differences found."""
    try:
        results = boards_check_recent(repair=True)
    finally:
        close_old_connections()
    for result in results:
        if not result.clean:
            logger.warning("%s: boards mended: %s", result.date, dict(result.drift))
    return sum(sum(result.drift.values()) for result in results)


def start(stop: threading.Event | None = None) -> threading.Thread:
    """Start the background thread that checks and mends the recent boards."""
    # After the day's close, so that yesterday is checked closed.
    return run_daily(
        "check-boards", check_once, stop=stop, after_midnight=2 * CLOSE_GRACE.total_seconds()
    )
