"""The standings settled from inside a server process (the embedded default).

In production compose's `standings` job runs `settle_standings` every ten
minutes. A single `make run` has no such job, so its server process starts
this thread too (with DAILY_DEAL_PREPARE_IN_PROCESS, as `games.preparer` and
`leaderboards.closer`): it settles what is due at once, then again a few
minutes after each UTC midnight and at least every hour.
"""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import close_old_connections

from games.preparer import NotYet, run_daily
from leaderboards.services import CLOSE_GRACE
from leagues.services import days_awaiting_close, standings_settle

logger = logging.getLogger(__name__)


def settle_once() -> int:
    """Settle every closed day not settled yet (or gone stale) and rank their
    weeks and months; the number of days settled. Raises `NotYet` after that
    when a day over is not closed yet, so the thread settles it a minute after,
    once `leaderboards.closer` has closed it."""
    try:
        first_day = settings.DAILY_DEAL_FIRST_DATE
        # Read before settling: a day closed meanwhile is settled at the retry,
        # not an hour later.
        waiting = days_awaiting_close(first_day=first_day)
        days = standings_settle(first_day=first_day)
        if days:
            logger.info("standings: %s day(s) settled, up to %s", len(days), days[-1])
    finally:
        close_old_connections()
    if waiting:
        raise NotYet(f"{len(waiting)} day(s) over and not closed yet, from {waiting[0]}")
    return len(days)


def start(stop: threading.Event | None = None) -> threading.Thread:
    """Start the background thread that keeps the standings settled."""
    # After the day's close, so the day's board is final when it is counted.
    return run_daily(
        "settle-standings", settle_once, stop=stop, after_midnight=2 * CLOSE_GRACE.total_seconds()
    )
