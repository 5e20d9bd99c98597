"""Container health check of the job worker: exit 0 when a job finished in the
last five minutes (the board mirror's job runs every minute), 1 otherwise.

A worker that hangs, lost its database or stopped taking jobs goes unhealthy
within minutes, which a check of its process alone would not see.
"""

import os
import sys
from datetime import timedelta

RECENT = timedelta(minutes=5)


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "easyharp_site.settings")
    import django

    django.setup()
    from django.utils import timezone
    from django_q.models import Task

    try:
        return 0 if Task.objects.filter(stopped__gte=timezone.now() - RECENT).exists() else 1
    except Exception as error:  # noqa: BLE001 - any failure is "unhealthy", said on stderr
        print(f"worker health check: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
