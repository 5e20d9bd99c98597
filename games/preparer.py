"""The days ahead, kept prepared from inside a server process (the embedded default).

In production a separate job prepares the next 30 days (`prepare_daily_deals`,
run by compose's `deals` service). A single `make run` has no such job, so its
server process starts this thread instead (setting
DAILY_DEAL_PREPARE_IN_PROCESS): it prepares today and tomorrow at once, then
again a few seconds after each UTC midnight and every `interval` seconds, so a
server left running past midnight serves the new day at once. No request ever
waits for it: a day not prepared yet is a clean 404.
"""

from __future__ import annotations

import datetime
import logging
import threading
from collections.abc import Callable

from django.db import close_old_connections
from django.utils import timezone

from games.services import daily_deals_prepare

logger = logging.getLogger(__name__)

DAYS_AHEAD = 2
INTERVAL_SECONDS = 3600.0
AFTER_MIDNIGHT_SECONDS = 5.0


def seconds_to_next_round(now: datetime.datetime, interval: float = INTERVAL_SECONDS) -> float:
    """How long to sleep from `now`: until just after the next UTC midnight, at most `interval`."""
    midnight = datetime.datetime.combine(
        now.date() + datetime.timedelta(days=1), datetime.time.min, tzinfo=datetime.UTC
    )
    return min(interval, (midnight - now).total_seconds() + AFTER_MIDNIGHT_SECONDS)


def prepare_once(days: int = DAYS_AHEAD) -> int:
    """Prepare today and the days after it; the number of days newly stored."""
    try:
        prepared = daily_deals_prepare(first=timezone.now().date(), days=days)
    finally:
        close_old_connections()
    new = [day for day, stored in prepared if stored]
    for day in new:
        logger.info("deal of %s prepared: deal %s, par %s", day.date, day.number, day.par)
    return len(new)


# Seconds before a failed round, or one whose input was not ready, runs again.
RETRY_SECONDS = 60.0


class NotYet(Exception):
    """Raised by a job that found part of its input not ready yet (a day not
    closed): `run_daily` runs it again after RETRY_SECONDS, not an hour later."""


def run_daily(
    name: str,
    job: Callable[[], object],
    *,
    stop: threading.Event | None = None,
    after_midnight: float = 0.0,
) -> threading.Thread:
    """Run `job` in a daemon thread now, then just after each UTC midnight (plus
    `after_midnight` seconds) and at least every hour; a failed round, or one
    that raised `NotYet`, runs again RETRY_SECONDS later. It ends with the
    process, or when `stop` is set."""
    stop = stop or threading.Event()

    def run() -> None:
        while not stop.is_set():
            try:
                job()
            except NotYet as waiting:
                logger.info("%s waits: %s", name, waiting)
                stop.wait(RETRY_SECONDS)
                continue
            except Exception:  # a failed round is logged and retried; the server keeps serving
                logger.exception("%s failed; retrying in a minute", name)
                stop.wait(RETRY_SECONDS)
                continue
            stop.wait(seconds_to_next_round(timezone.now()) + after_midnight)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


def start(stop: threading.Event | None = None) -> threading.Thread:
    """Start the background thread that prepares the days ahead."""
    return run_daily("daily-deals", prepare_once, stop=stop)
