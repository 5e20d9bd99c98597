"""Settings of bench/jobs.py: the service's own, plus django-tasks' database backend
when `--library django-tasks` asks for it (installed apart, on PYTHONPATH).

Never used by the service itself.
"""

import os

from easyharp_site.settings import *  # noqa: F403
from easyharp_site.settings import INSTALLED_APPS

if os.environ.get("BENCH_JOBS_LIBRARY") == "django-tasks":
    INSTALLED_APPS = [*INSTALLED_APPS, "django_tasks", "django_tasks_db"]
    TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
