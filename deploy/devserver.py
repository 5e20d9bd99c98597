"""`make run`'s server: Django's development server with the job worker beside it.

The worker (`manage.py qcluster`) runs in a session of its own, so that a
Ctrl-C meant for the server reaches it only through here: when the server
stops, for any reason, the worker is asked to stop (SIGTERM) and, if it is
still running a job 10 s later, killed with all its processes. A job cut short
that way is run again (every job is harmless to run twice), and its queue is
in the database, so nothing queued is lost.

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


def stop(worker: subprocess.Popen[bytes]) -> None:
    """Ask the worker to stop (its main process stops the others), then kill its
    process group after the grace."""
    for kill, wait in ((worker.terminate, GRACE_SECONDS), (_kill_group(worker), 0.0)):
        try:
            kill()
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                os.killpg(worker.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


def _kill_group(worker: subprocess.Popen[bytes]) -> Callable[[], None]:
    return lambda: os.killpg(worker.pid, signal.SIGKILL)


def main() -> int:
    manage = [sys.executable, str(ROOT / "manage.py")]
    worker = subprocess.Popen([*manage, "qcluster"], cwd=ROOT, start_new_session=True)
    # SIGTERM ends the server as Ctrl-C does, through the `finally` below.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return subprocess.call([*manage, "runserver", *sys.argv[1:]], cwd=ROOT)
    except KeyboardInterrupt:
        return 130
    finally:
        stop(worker)
        worker.wait()


if __name__ == "__main__":
    raise SystemExit(main())
