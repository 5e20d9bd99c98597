"""Container health check of the job worker: exit 0 while its heartbeat is fresh, 1 otherwise.

The worker touches TASK_HEARTBEAT_FILE each time it looks at the queue (every
TASK_POLL_SECONDS when idle; easyharp_site/job_broker.py). A worker that died,
hangs or lost its database stops touching it, and this check fails once the
file is older than TASK_HEARTBEAT_STALE_SECONDS. Only the settings module is
read (no app is loaded and no query made), so the check stays quick.
"""

import os
import sys
import time


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "easyharp_site.settings")
    from django.conf import settings

    try:
        heartbeat, stale = settings.TASK_HEARTBEAT_FILE, settings.TASK_HEARTBEAT_STALE_SECONDS
        age = time.time() - heartbeat.stat().st_mtime
    except Exception as error:  # noqa: BLE001 - any failure is "unhealthy", said on stderr
        print(f"worker health check: no heartbeat: {error}", file=sys.stderr)
        return 1
    if age > stale:
        print(
            f"worker health check: {heartbeat} is {age:.0f} s old (over {stale} s)", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
