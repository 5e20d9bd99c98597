"""The ranking's jobs, run by the job worker (easyharp_site/jobs.py)."""

from __future__ import annotations

import logging

from easyharp_site.jobs import job_schedule
from ranking.actions import copies_check as copies_check_all
from ranking.actions import unsubmitted_attempts_check
from ranking.audit import days_check_recent

logger = logging.getLogger(__name__)


def boards_check() -> str:
    """The job: check the last days' boards and every store derived from their games
    against the games, and mend what drifted (`ranking.audit`). A day in step is
    left alone, so a second run mends nothing."""
    results = days_check_recent(repair=True)
    for result in results:
        if not result.clean:
            logger.warning("%s: boards mended: %s", result.date, dict(result.drift))
    return "; ".join(
        f"{result.date.isoformat()}: "
        + ("in step" if result.clean else f"{sum(result.drift.values())} mended")
        for result in results
    )


def copies_check() -> str:
    """The job: the copy check of the daily games stored since its last run, then of the
    closed days' attempts never submitted; a copy leaves the boards until reviewed
    (`ranking.actions.copies_check`, `ranking.actions.unsubmitted_attempts_check`)."""
    games = copies_check_all()
    attempts = unsubmitted_attempts_check()
    return f"{games} game(s) checked, {attempts} attempt(s) of closed days read"


def schedule() -> None:
    job_schedule(name="check boards", func="ranking.tasks.boards_check", minutes=60)
    # Every minute (the schedule's shortest): a copy is off the boards and in the
    # review queue a minute or two after it was submitted.
    job_schedule(name="check copies", func="ranking.tasks.copies_check", minutes=1)
