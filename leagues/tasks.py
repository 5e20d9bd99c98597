"""The standings' job, run by the job worker (easyharp_site/jobs.py)."""

from __future__ import annotations

import logging

from django.conf import settings

from easyharp_site.jobs import job_schedule
from leagues.services import standings_settle

logger = logging.getLogger(__name__)


def standings_refresh() -> str:
    """The job: settle every closed day not settled yet (or gone stale) and rank their
    weeks and months. A settled day is left alone, so a second run settles nothing."""
    days = standings_settle(first_day=settings.DAILY_DEAL_FIRST_DATE)
    if days:
        logger.info("standings: %s day(s) settled, up to %s", len(days), days[-1])
    return f"{len(days)} day(s) settled"


def schedule() -> None:
    job_schedule(name="settle standings", func="leagues.tasks.standings_refresh", minutes=10)
