"""The boards' jobs, run by the job worker (easyharp_site/jobs.py)."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.utils import timezone

from easyharp_site.dates import today
from easyharp_site.jobs import job_schedule
from leaderboards.mirror import mirror_enabled
from leaderboards.reminders import reminders_queue
from leaderboards.services import board_counts_fold, board_mirror_build, day_close, days_to_close

logger = logging.getLogger(__name__)


def days_close() -> str:
    """The job: close every day that is over and not closed yet (final ranks, frozen
    results). A closed day is left alone, so a second run does nothing."""
    days = days_to_close(now=timezone.now())
    for day in days:
        result = day_close(date=day)
        logger.info("%s closed: %s players, %s won", day, result.players, result.won)
    return f"{len(days)} day(s) closed"


def board_counts_fold_all() -> str:
    """The job: fold the boards' count changes into their counters
    (`services.board_counts_fold`). Nothing waiting, nothing done."""
    return f"{board_counts_fold()} count change(s) folded"


def board_mirror_refresh() -> str:
    """The job: build the board mirror in Redis of tomorrow, today and yesterday where
    it is not complete (a new day, or Redis lost it). A complete mirror is left
    alone, so a second run builds nothing."""
    if not mirror_enabled():
        return "the board mirror is off"
    built = []
    for day in (today() + timedelta(days=n) for n in (1, 0, -1)):
        players = board_mirror_build(date=day)
        if players is not None:
            built.append(f"{day.isoformat()}: {players} players")
    return "; ".join(built) or "complete"


# Every five minutes: a reminder comes within five minutes of its hour.
REMINDERS_EVERY_MINUTES = 5


def reminders_send() -> str:
    """The job: queue the reminder mails due now (`leaderboards.reminders`). A player
    reminded today is not reminded again, so a second run queues nothing."""
    run = reminders_queue(now=timezone.now())
    if run.date is None:
        return "today's deal is not stored yet: no reminders"
    if run.left:
        logger.warning("reminders: the mail queue is full; %s left for the next run", run.left)
    return f"{run.date.isoformat()}: {run.queued} reminder(s) queued, {run.left} left"


def schedule() -> None:
    # Ten minutes: a day is closed within minutes of its grace period's end.
    job_schedule(name="close days", func="leaderboards.tasks.days_close", minutes=10)
    job_schedule(
        name="fold board counts", func="leaderboards.tasks.board_counts_fold_all", minutes=1
    )
    job_schedule(
        name="build the board mirror", func="leaderboards.tasks.board_mirror_refresh", minutes=1
    )
    job_schedule(
        name="send reminders",
        func="leaderboards.tasks.reminders_send",
        minutes=REMINDERS_EVERY_MINUTES,
    )
