"""The races' job, run by the job worker (easyharp_site/jobs.py)."""

from __future__ import annotations

import logging

from easyharp_site.jobs import job_schedule
from races.services import races_end_due

logger = logging.getLogger(__name__)


def races_end() -> str:
    """The job: store the end of every race whose time ran out (its sockets may all be
    closed), and close the lobbies nobody started within a day. A race ended already is
    left alone, so a second run ends nothing."""
    ended = races_end_due()
    if ended:
        logger.info("races: %s ended", ended)
    return f"{ended} race(s) ended"


def schedule() -> None:
    job_schedule(name="end races", func="races.tasks.races_end", minutes=1)
