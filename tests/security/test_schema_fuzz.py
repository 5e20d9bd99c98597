"""Fuzz the whole HTTP API from its own OpenAPI schema with schemathesis.

Schemathesis reads `/api/schema/` and generates requests for every operation,
valid and invalid (wrong types, missing fields, odd unicode, huge numbers),
calling the Django app in-process. Every answer must be below 500, and every
refusal must be in the documented error shape.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode

from tests.security.conftest import assert_error_shape

FUZZ = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)

# pytest-django has set Django up before collection; reading the schema needs no database.
schema = schemathesis.openapi.from_wsgi("/api/schema/", WSGIHandler())
schema.config.generation.update(modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
# The coverage phase adds boundary values (limits, huge numbers, empty and
# missing fields) on top of the random fuzzing.
schema.config.phases.update(phases=["examples", "coverage", "fuzzing"])


@pytest.fixture(autouse=True)
def _in_process_app(settings: Any) -> Iterator[None]:
    """Call the app like Django's test client does: keep the test's database
    connection open between requests, and lift the rate limits so the fuzzer
    reaches the views (the limits have their own tests)."""
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = dict.fromkeys(rest["DEFAULT_THROTTLE_RATES"], "100000/min")
    settings.REST_FRAMEWORK = rest
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def check_response(response: Any) -> None:
    assert response.status_code < 500, (response.status_code, response.text[:500])
    if response.status_code >= 400:
        # Every refusal, whatever the input, is in the documented shape.
        assert_error_shape(response.json())


@pytest.mark.django_db(transaction=False)
@schema.parametrize()
@FUZZ
def test_anonymous_requests_never_fail_on_the_server(case: Any, daily: Any) -> None:
    check_response(case.call())


@pytest.mark.django_db(transaction=False)
@schema.parametrize()
@FUZZ
def test_signed_in_requests_never_fail_on_the_server(case: Any, daily: Any, token: str) -> None:
    check_response(case.call(headers={"Authorization": f"Token {token}"}))
