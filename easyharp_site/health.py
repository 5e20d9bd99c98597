"""`/healthz/`: whether this server process can serve, for load balancers and compose."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, JsonResponse
from redis.exceptions import RedisError

from easyharp_site.errors import error_body
from easyharp_site.jobs import jobs_queue_size, jobs_report, jobs_status
from easyharp_site.loop_pool import pools_report

# What the service still does, and what it does not, while Redis is away.
WITHOUT_REDIS = {
    "works": [
        "pages, games, submissions and boards (from the database)",
        "share pictures (drawn each time, not cached)",
        "rate limits (counted per server process)",
        "live boards (re-read every LIVE_BOARD_REFRESH_SECONDS, not at each change)",
    ],
    "degraded": [
        "live updates across server processes",
        "rate limits shared between server processes",
        "the share-picture cache",
    ],
}


def _redis_answers() -> bool:
    try:
        cache.get("healthz")
    except (RedisError, OSError):
        return False
    return True


def healthz(request: HttpRequest) -> JsonResponse:
    """200 `{"status": "ok"}` when the database (and Redis, when configured) answers;
    200 `degraded`, saying what still works, without Redis; else 503 in the error shape.

    A missing Redis leaves the process able to serve, so a load balancer keeps it.
    With `?details=1` the answer also lists each periodic job (`jobs`: whether
    its last run worked and whether it is late; for staff, its schedule and its
    last run, when and what it said), how many jobs (mails among them) wait in
    the queue or are being run (`queue`), and the pools of this process's event
    loop connections (`loop_pools`: size, idle, waiting, errors). When each job
    runs is for staff only: it tells when a day closes and its boards settle.
    """
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:  # any database failure means "not healthy", whatever its class
        return JsonResponse(
            error_body("database_unavailable", "The database does not answer."), status=503
        )
    body: dict[str, Any] = {"status": "ok"}
    if settings.REDIS_URL and not _redis_answers():
        body = {"status": "degraded", "database": "ok", "redis": "unavailable", **WITHOUT_REDIS}
    if request.GET.get("details") == "1":
        staff = getattr(request, "user", None) is not None and request.user.is_staff
        body["jobs"] = jobs_report() if staff else jobs_status()
        body["queue"] = jobs_queue_size()
        body["loop_pools"] = pools_report()
    return JsonResponse(body)
