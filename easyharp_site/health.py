"""`/healthz/`: whether this server process can serve, for load balancers and compose."""

from __future__ import annotations

from django.db import connection
from django.http import HttpRequest, JsonResponse

from easyharp_site.errors import error_body


def healthz(request: HttpRequest) -> JsonResponse:
    """200 `{"status": "ok"}` when the database answers, else 503 in the error shape."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:  # any database failure means "not healthy", whatever its class
        return JsonResponse(
            error_body("database_unavailable", "The database does not answer."), status=503
        )
    return JsonResponse({"status": "ok"})
