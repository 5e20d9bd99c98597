"""The job queue's broker (Q_CLUSTER's `broker_class`): django-q2's ORM broker,
with a lock per job and a heartbeat.

A worker takes a job by locking its row until a moment; once that moment has
passed, any worker may take the job again (its worker died mid-run, or the job
failed). django-q2 locks every job for one `retry`; here each job is locked
for its own timeout and TASK_RETRY_SECONDS, so a mail cut by a kill is sent
again a minute and a half later while no job is ever taken twice while it may
still be running.

Each look at the queue (every TASK_POLL_SECONDS when it is empty) touches
TASK_HEARTBEAT_FILE, which deploy/worker_healthcheck.py reads: a worker that
died, hangs or lost its database stops touching it.
"""

from __future__ import annotations

import datetime
import time
from typing import Any

from django.conf import settings
from django.utils import timezone
from django_q.brokers.orm import ORM
from django_q.signing import BadSignature, SignedPackage

# At most one touch of the heartbeat file in this many seconds.
HEARTBEAT_EVERY_SECONDS = 1.0


def job_lock_seconds(package: dict[str, Any]) -> int:
    """How long a job is locked once taken: its timeout, then TASK_RETRY_SECONDS."""
    timeout = package.get("timeout") or settings.TASK_TIMEOUT_SECONDS
    return int(timeout) + settings.TASK_RETRY_SECONDS


class JobBroker(ORM):  # type: ignore[misc]
    _beaten_at = 0.0

    def timeout(self, task: Any) -> datetime.datetime:
        try:
            package = SignedPackage.loads(task.payload)
        except (TypeError, BadSignature):
            package = {}  # the pusher drops it as unreadable; any lock will do
        return timezone.now() + datetime.timedelta(seconds=job_lock_seconds(package))

    def dequeue(self) -> Any:
        taken = super().dequeue()
        self._beat()
        return taken

    def _beat(self) -> None:
        now = time.monotonic()
        if now - self._beaten_at < HEARTBEAT_EVERY_SECONDS:
            return
        settings.TASK_HEARTBEAT_FILE.touch()
        self._beaten_at = now
