"""The job bench/jobs.py queues: it only notes when it started (in the cache)."""

from __future__ import annotations

import time

from django.core.cache import cache


def note_start(number: int) -> None:
    """Record when job `number` started, in the shared cache."""
    cache.set(f"bench-job-{number}", time.time(), 600)


try:  # django-tasks' form of the same job, where that library is installed
    from django_tasks import task
except ImportError:
    pass
else:

    @task()  # type: ignore[misc]
    def note_start_task(number: int) -> None:
        note_start(number)
