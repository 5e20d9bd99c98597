"""Jobs run in the test's own process: what the worker would do with the queue, now.

Requests queue their jobs (mail) in the job queue's table; a test runs them
with `run_queued_jobs()` (the SMTP fixture does before it reads its inbox).
tests/easyharp_site/test_jobs_worker.py runs the real worker instead, with
`job_cut_once` as the job it kills the worker in.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from django.utils.module_loading import import_string
from django_q.models import OrmQ
from django_q.signing import SignedPackage

logger = logging.getLogger(__name__)


def run_queued_jobs() -> int:
    """Run every job waiting in the queue, oldest first, as a worker would take them;
    a job that fails is logged and stays queued for the next call. The number run."""
    ran = 0
    for row in OrmQ.objects.order_by("id"):
        task = SignedPackage.loads(row.payload)
        func = task["func"]
        try:
            (import_string(func) if isinstance(func, str) else func)(
                *task["args"], **task["kwargs"]
            )
        except Exception:
            logger.info("queued job %s failed; it stays queued", task["name"], exc_info=True)
            continue
        row.delete()
        ran += 1
    return ran


def job_cut_once(notes: str, seconds: float) -> str:
    """A test job for the real worker: notes each start in the file `notes`; the first
    run then waits `seconds` (long enough to be killed), a later one ends at once."""
    path = Path(notes)
    with path.open("a") as file:
        file.write(f"started {os.getpid()}\n")
    if path.read_text().count("started") == 1:
        time.sleep(seconds)
    with path.open("a") as file:
        file.write("done\n")
    return "done"
