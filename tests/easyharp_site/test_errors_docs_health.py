"""Every API error has one shape; the schema, the offline docs page and /healthz."""

from __future__ import annotations

import re
from unittest import mock

import pytest
from django.db.utils import OperationalError
from django.test import Client, override_settings

pytestmark = pytest.mark.django_db


def test_an_unknown_api_path_is_a_json_404(anon):
    response = anon.get("/api/no-such-thing/")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    ("language", "title", "reason"),
    [
        ("en", "Page not found", "That day has not come yet."),
        ("es", "Página no encontrada", "Ese día todavía no ha llegado."),
        ("nl", "Pagina niet gevonden", "Die dag is er nog niet."),
    ],
)
def test_a_page_not_found_is_the_sites_own_page_in_the_visitors_language(language, title, reason):
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    # A view's own reason is said; a URL that matched nothing gets the plain one.
    later = client.get("/leaderboard/2999-01-01/")
    nowhere = client.get("/no-such-page/")

    for response in (later, nowhere):
        assert response.status_code == 404
        page = response.content.decode()
        assert f'<html lang="{language}">' in page
        assert f"<h1>{title}</h1>" in page
        assert 'href="/play/"' in page  # the way back
    assert reason in later.content.decode()
    assert "Resolver404" not in nowhere.content.decode()


def test_a_wrong_method_is_a_json_405(anon):
    response = anon.delete("/api/daily/")

    assert response.status_code == 405
    error = response.json()["error"]
    assert error["code"] == "method_not_allowed"
    assert "DELETE" in error["message"]


@override_settings(
    REST_FRAMEWORK={
        "EXCEPTION_HANDLER": "easyharp_site.errors.api_exception_handler",
        "DEFAULT_THROTTLE_CLASSES": ["rest_framework.throttling.ScopedRateThrottle"],
        "DEFAULT_THROTTLE_RATES": {"auth": "1/min", "signup": "1/min", "submit": "1/min"},
    }
)
def test_throttling_is_a_json_429_with_the_wait(anon):
    from rest_framework.settings import api_settings

    api_settings.reload()
    try:
        body = {"username": "x", "password": "y"}
        anon.post("/api/auth/token/", body, format="json")
        response = anon.post("/api/auth/token/", body, format="json")
    finally:
        api_settings.reload()

    assert response.status_code == 429
    error = response.json()["error"]
    assert error["code"] == "throttled"
    assert error["wait"] > 0


def test_the_openapi_schema_lists_the_api(anon):
    response = anon.get("/api/schema/", HTTP_ACCEPT="application/json")

    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in (
        "/api/auth/register/",
        "/api/auth/token/",
        "/api/daily/",
        "/api/daily/{date}/",
        "/api/deals/{code}/",
        "/api/games/",
        "/api/games/{game_id}/",
        "/api/games/{game_id}/replay/",
        "/api/daily/{date}/leaderboard/",
        "/api/players/{username}/",
    ):
        assert path in paths


def test_the_docs_page_loads_nothing_from_another_site(anon):
    response = Client().get("/api/docs/")

    assert response.status_code == 200
    html = response.content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert any("swagger-ui" in source for source in sources)
    assert not [s for s in sources if s.startswith(("http:", "https:", "//"))]


def test_healthz_answers_when_the_database_does():
    response = Client().get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_healthz_is_503_when_the_database_does_not():
    with mock.patch("easyharp_site.health.connection.cursor", side_effect=OperationalError("down")):
        response = Client().get("/healthz")

    assert response.status_code == 503
    assert response.json()["error"]["code"] == "database_unavailable"


def test_an_unexpected_failure_under_api_is_a_json_500():
    client = Client(raise_request_exception=False)

    with mock.patch("games.api.selectors.game_get", side_effect=RuntimeError("bug")):
        response = client.get("/api/games/1/")

    assert response.status_code == 500
    assert response.json()["error"]["code"] == "server_error"
    assert "bug" not in response.content.decode()
