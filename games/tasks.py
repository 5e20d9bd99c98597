"""The games' jobs, run by the job worker (easyharp_site/jobs.py)."""

from __future__ import annotations

import datetime
import logging
import os
import time

from django.conf import settings

from easyharp_site.dates import today
from easyharp_site.jobs import job_schedule
from games.models import DailyDeal
from games.services import daily_deals_prepare

logger = logging.getLogger(__name__)

# A run with nothing to prepare costs one read a day ahead; hourly keeps the
# new day ready at midnight however few days ahead are kept.
PREPARE_EVERY_MINUTES = 60


# A run chooses no new day after this many seconds (each takes the solver about
# ten): it ends within its timeout, and within the worker's grace on a stop;
# the next run goes on from there. Days are needed one a day.
PREPARE_SECONDS = 60
# The job's timeout: a day may try up to 20 candidates, each capped by the
# solver's nodes (about ten seconds), after the run's PREPARE_SECONDS.
PREPARE_TIMEOUT_SECONDS = 300


def deals_prepare() -> str:
    """The job: store the deals of today and the DAILY_DEAL_DAYS_AHEAD - 1 days after it
    that are not stored yet, for PREPARE_SECONDS at most. Days already stored
    are left as they are, so a second run does nothing.

    The solver runs at HEAVY_WORK_NICENESS, below the web servers sharing the
    cores. A process cannot take back a lower priority, so the worker process
    stays there for its later jobs, all of them background work too."""
    os.nice(max(0, settings.HEAVY_WORK_NICENESS - os.nice(0)))
    first, started = today(), time.monotonic()
    prepared: list[tuple[DailyDeal, bool]] = []
    new: list[DailyDeal] = []
    for offset in range(settings.DAILY_DEAL_DAYS_AHEAD):
        if new and time.monotonic() - started > PREPARE_SECONDS:
            break
        prepared += daily_deals_prepare(first=first + datetime.timedelta(days=offset), days=1)
        new = [day for day, stored in prepared if stored]
    for day in new:
        logger.info("deal of %s prepared: deal %s, par %s", day.date, day.number, day.par)
    left = settings.DAILY_DEAL_DAYS_AHEAD - len(prepared)
    later = f", {left} left for the next run" if left else ""
    return f"{len(new)} new day(s), {len(prepared) - len(new)} already stored{later}"


def schedule() -> None:
    job_schedule(
        name="prepare deals",
        func="games.tasks.deals_prepare",
        minutes=PREPARE_EVERY_MINUTES,
        timeout=PREPARE_TIMEOUT_SECONDS,
    )
