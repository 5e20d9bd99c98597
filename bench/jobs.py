"""What a job costs to queue and how soon a worker starts it, per task library.

    .venv/bin/python bench/jobs.py --database-url postgres://postgres@127.0.0.1:5432/eh_jobsbench \
        --redis-url redis://127.0.0.1:6379/9
    PYTHONPATH=/tmp/djtasks .venv/bin/python bench/jobs.py --library django-tasks ...

On an emptied database (PostgreSQL with `--database-url`, else a new SQLite
file), migrated, it measures for django-q2 (ORM broker, the service's own) or
django-tasks with its database backend (django-tasks-db, installed apart):

- queueing: `--count` jobs queued one after another from this process, each
  in its own transaction (as a request does), in ms per job;
- pickup: with the library's worker running (`qcluster`, `db_worker`), jobs
  queued one at a time, each waited for: from queued to started, in ms;
- idle: the worker's CPU seconds over 20 s with nothing to do.

The job notes its start in the cache (Redis, shared with the worker).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cpu_seconds(pid: int) -> float:
    """CPU time of `pid` and its descendants (from /proc)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # fields[2] is the process group (each worker runs in a session of its own).
        if int(fields[2]) == pid:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", choices=["django-q2", "django-tasks"], default="django-q2")
    parser.add_argument("--database-url", help="PostgreSQL database to use (emptied)")
    parser.add_argument("--redis-url", required=True, help="Redis database (flushed)")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--pickups", type=int, default=20)
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="easyharp-jobs-")
    env = {
        **os.environ,
        "DATABASE_URL": args.database_url or f"sqlite:///{tmp}/db.sqlite3",
        "REDIS_URL": args.redis_url,
        "DJANGO_SETTINGS_MODULE": "bench.settings_jobs",
        "BENCH_JOBS_LIBRARY": args.library,
        "TASK_POLL_SECONDS": "0.5",
        "TASK_WORKERS": "1",
        "LOG_LEVEL": "WARNING",
    }
    manage = [sys.executable, "manage.py"]
    if args.database_url:
        subprocess.run([*manage, "flush", "--noinput"], cwd=ROOT, env=env, capture_output=True)
    subprocess.run([*manage, "migrate", "--noinput"], cwd=ROOT, env=env, check=True,
                   capture_output=True)  # fmt: skip
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.cache import cache
    from django.db import transaction
    from django_q.models import Schedule

    from bench import jobs_work

    cache.clear()
    # The service's own periodic jobs would take the worker (the deals: minutes of solver).
    Schedule.objects.all().delete()
    if args.library == "django-q2":
        from django_q.tasks import async_task

        def queue(number: int) -> None:
            async_task("bench.jobs_work.note_start", number)

        worker = [*manage, "qcluster"]
    else:

        def queue(number: int) -> None:
            jobs_work.note_start_task.enqueue(number)

        worker = [*manage, "db_worker", "--interval", "0.5"]

    took = []
    for number in range(args.count):
        started = time.perf_counter()
        with transaction.atomic():
            queue(number)
        took.append((time.perf_counter() - started) * 1000)
    took.sort()
    print(f"{args.library} on {'PostgreSQL' if args.database_url else 'SQLite'}: queueing "
          f"{args.count} jobs: median {statistics.median(took):.2f} ms, "
          f"p99 {took[int(len(took) * 0.99) - 1]:.2f} ms")  # fmt: skip

    process = subprocess.Popen(worker, cwd=ROOT, env=env, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 600
        while cache.get(f"bench-job-{args.count - 1}") is None:
            assert time.monotonic() < deadline, "the backlog was not worked off"
            time.sleep(0.1)
        waits = []
        for number in range(args.count, args.count + args.pickups):
            queued = time.time()
            with transaction.atomic():
                queue(number)
            while (began := cache.get(f"bench-job-{number}")) is None:
                time.sleep(0.005)
            waits.append((began - queued) * 1000)
        waits.sort()
        print(f"  pickup of {args.pickups} jobs, one at a time: median "
              f"{statistics.median(waits):.0f} ms, max {waits[-1]:.0f} ms")  # fmt: skip
        before = cpu_seconds(process.pid)
        time.sleep(20)
        idle = cpu_seconds(process.pid) - before
        print(f"  worker idle for 20 s: {idle:.2f} s of CPU")
    finally:
        from deploy.devserver import stop

        stop(process)  # as `make run` stops it
        process.wait()


if __name__ == "__main__":
    main()
