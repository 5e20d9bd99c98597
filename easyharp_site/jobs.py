"""The jobs: queued to django-q2's worker (`manage.py qcluster`), periodic ones on a schedule.

Each app names its jobs by dotted path (`games.tasks.deals_prepare`, ...) and
schedules its periodic ones after `migrate` (`job_schedule`, from its
AppConfig). The queue and the schedules are tables of the project's database
(django-q2's ORM broker), so nothing queued is lost when a process stops, and
the admin's "Jobs" section shows each job's runs, failures and schedule;
`jobs_report` gives the last run of each periodic job to `/healthz/?details=1`
for staff, `jobs_status` whether each works to anyone.
"""

from __future__ import annotations

import datetime
from importlib import import_module
from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils import timezone

# django-q2's models are imported where they are used: the apps import this
# module from their AppConfig, before any model may be.


def job_queue(func: str, *args: Any, name: str, timeout: int | None = None) -> str:
    """Queue the job `func(*args)` in the current transaction; its task id.

    The queue is a table of the same database: when the caller's transaction
    rolls back, the job was never queued. `timeout`: the most seconds it runs
    (TASK_TIMEOUT_SECONDS by default); a worker that died running it has it
    taken again TASK_RETRY_SECONDS after that (easyharp_site/job_broker.py).
    """
    from django_q.tasks import async_task

    options = {} if timeout is None else {"timeout": timeout}
    return str(async_task(func, *args, task_name=name, **options))


def job_schedule(*, name: str, func: str, minutes: int, timeout: int | None = None) -> None:
    """Run `func` every `minutes` (first at once), for at most `timeout` seconds
    (TASK_TIMEOUT_SECONDS by default); a schedule already stored keeps its next
    run, so scheduling again after each `migrate` changes nothing else."""
    from django_q.models import Schedule

    fields = {
        "func": func,
        "schedule_type": Schedule.MINUTES,
        "minutes": minutes,
        # django-q2 reads a schedule's options from its keyword arguments.
        "kwargs": "" if timeout is None else f"q_options={{'timeout': {int(timeout)}}}",
    }
    Schedule.objects.update_or_create(
        name=name, defaults=fields, create_defaults={**fields, "next_run": timezone.now()}
    )


def jobs_schedule_after_migrate(app: AppConfig) -> None:
    """Have each `migrate` store `app`'s periodic jobs (its `tasks.schedule()`)."""

    def schedule(**kwargs: Any) -> None:
        import_module(f"{app.name}.tasks").schedule()

    post_migrate.connect(schedule, sender=app, weak=False, dispatch_uid=f"jobs {app.name}")


def _when(moment: datetime.datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def jobs_report() -> list[dict[str, Any]]:
    """Each periodic job: its last run (when it started and ended, whether it
    worked, what it said) and its next run."""
    from django_q.models import Schedule, Task

    report = []
    for schedule in Schedule.objects.order_by("name"):
        run = Task.objects.filter(func=schedule.func).order_by("-stopped").first()
        report.append(
            {
                "name": schedule.name,
                "every_minutes": schedule.minutes,
                "next_run": _when(schedule.next_run),
                "last_run": None
                if run is None
                else {
                    "started": _when(run.started),
                    "stopped": _when(run.stopped),
                    "ok": run.success,
                    "result": str(run.result)[:200],
                    "attempts": run.attempt_count,
                },
            }
        )
    return report


def jobs_status() -> list[dict[str, Any]]:
    """Each periodic job's health, saying nothing of when it runs: whether its last run
    worked (`ok`, None before its first) and whether it is `late` (its next run
    overdue by more than its period: no worker takes it)."""
    from django_q.models import Schedule, Task

    now = timezone.now()
    status = []
    for schedule in Schedule.objects.order_by("name"):
        run = Task.objects.filter(func=schedule.func).order_by("-stopped").first()
        period = datetime.timedelta(minutes=schedule.minutes or 0)
        due = schedule.next_run
        status.append(
            {
                "name": schedule.name,
                "ok": None if run is None else bool(run.success),
                "late": due is not None and due + period < now,
            }
        )
    return status


def jobs_queue_size() -> dict[str, int]:
    """Jobs queued and not taken yet (`waiting`), and taken by a worker (`taken`)."""
    from django_q.models import OrmQ

    now = timezone.now()
    return {
        "waiting": OrmQ.objects.filter(lock__lte=now).count(),
        "taken": OrmQ.objects.filter(lock__gt=now).count(),
    }
