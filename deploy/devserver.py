"""`make run`'s server: Django's development server with the job worker beside it.

The worker (`manage.py qcluster`) and the server each run in a session of
their own, so that a Ctrl-C, or a SIGTERM to this process, reaches them only
through here: when the server stops, for any reason, or this process is told to,
the server's processes (its autoreloader and the server it runs) and the
worker are asked to stop (SIGTERM) and, if still running 10 s later (a job
under way), killed with all their processes. A job cut short
that way is run again (every job is harmless to run twice), and its queue is
in the database, so nothing queued is lost.

The jobs due are queued before the worker starts, so that it runs them at
once rather than at its scheduler's first round, 30 s in.

    python deploy/devserver.py 127.0.0.1:8000
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GRACE_SECONDS = 10.0


def stop(worker: subprocess.Popen[bytes], *, whole_group: bool = False) -> None:
    """Ask the worker to stop (its main process stops the others; with `whole_group`,
    every process of its group is asked), then kill its process group after the grace."""
    ask = _signal_group(worker, signal.SIGTERM) if whole_group else worker.terminate
    for kill, wait in ((ask, GRACE_SECONDS), (_signal_group(worker, signal.SIGKILL), 0.0)):
        try:
            kill()
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            worker.poll()  # reaps the group's leader once it exits: a zombie still counts
            try:
                os.killpg(worker.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


def _signal_group(process: subprocess.Popen[bytes], number: int) -> Callable[[], None]:
    return lambda: os.killpg(process.pid, number)


# The worker's scheduler queues the jobs that are due every 30 s, the first time
# 30 s after it starts; this queues them at once, as that round would.
JOBS_DUE = "from django_q.scheduler import scheduler; scheduler()"


def main() -> int:
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "shell", "--no-imports", "-c", JOBS_DUE], cwd=ROOT, check=False)
    worker = subprocess.Popen([*manage, "qcluster"], cwd=ROOT, start_new_session=True)
    # SIGTERM ends the server as Ctrl-C does, through the `finally` below.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    # In a group of its own too: its autoreloader runs the server in a child,
    # which a signal to the reloader alone would leave behind.
    server = subprocess.Popen(
        [*manage, "runserver", *sys.argv[1:]], cwd=ROOT, start_new_session=True
    )
    try:
        return server.wait()
    except KeyboardInterrupt:
        return 130
    finally:
        stop(server, whole_group=True)
        stop(worker)
        server.wait()
        worker.wait()


if __name__ == "__main__":
    raise SystemExit(main())
