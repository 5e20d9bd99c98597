"""Site-wide guards: body size cap, deep JSON, and 503 while the database is away."""

from __future__ import annotations

import asyncio
import json
from unittest import mock

import pytest
from django.db import InterfaceError, OperationalError
from django.test import Client, override_settings

from tests.security.conftest import asgi_http_scope

pytestmark = pytest.mark.urls("tests.security.urls")


def assert_error_shape(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content[:300]
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=10_000)
def test_a_body_over_the_cap_is_refused_with_413_in_the_error_shape() -> None:
    body = json.dumps({"log": "S " * 6_000})
    response = Client().post("/api/echo/", body, content_type="application/json")
    assert_error_shape(response, 413, "request_too_large")


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=10_000)
def test_a_body_just_under_the_cap_is_read_normally() -> None:
    body = json.dumps({"log": "S " * 4_000})
    response = Client().post("/api/echo/", body, content_type="application/json")
    assert response.status_code == 200
    assert response.json() == {"received": "dict"}


async def asgi_post(
    path: str, body: bytes, headers: list[tuple[bytes, bytes]]
) -> tuple[int, bytes]:
    """POST through Django's ASGI handler with exactly the given headers."""
    from django.core.handlers.asgi import ASGIHandler

    scope = asgi_http_scope(path, headers)
    chunks = [body[i : i + 4096] for i in range(0, len(body), 4096)] or [b""]
    messages = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks)
    ]
    sent: list[dict] = []

    async def receive() -> dict:
        if messages:
            return messages.pop(0)
        await asyncio.Event().wait()  # the client stays connected until the response
        raise AssertionError("unreachable")

    async def send(message: dict) -> None:
        sent.append(message)

    await ASGIHandler()(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    content = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, content


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=10_000)
@pytest.mark.parametrize("claimed", [None, b"10"])
async def test_a_missing_or_understated_length_does_not_bypass_the_cap_under_asgi(
    claimed: bytes | None,
) -> None:
    # The ASGI server buffers the real body, whatever length the client claims.
    body = json.dumps({"log": "S " * 20_000}).encode()
    headers = [(b"content-type", b"application/json")]
    if claimed is not None:
        headers.append((b"content-length", claimed))
    status, content = await asgi_post("/api/echo/", body, headers)
    assert status == 413
    assert json.loads(content)["error"]["code"] == "request_too_large"


async def test_a_garbled_content_length_is_a_400_not_a_crash() -> None:
    status, content = await asgi_post(
        "/api/echo/",
        b"{}",
        [(b"content-type", b"application/json"), (b"content-length", b"2,2")],
    )
    assert status == 400
    assert json.loads(content)["error"]["code"] == "bad_request"


def test_the_default_cap_admits_a_log_of_twenty_thousand_and_one_actions() -> None:
    from django.conf import settings

    log = " ".join(["F27"] * 20_001)
    as_list = json.dumps({"deal": "EH1-N-AAAAAAB", "log": log.split()})
    assert len(as_list) < settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    response = Client().post("/api/echo/", as_list, content_type="application/json")
    assert response.status_code == 200


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_deeply_nested_json_is_a_400_parse_error_not_a_crash(depth: int) -> None:
    body = "[" * depth + "]" * depth
    response = Client(raise_request_exception=False).post(
        "/api/echo/", body, content_type="application/json"
    )
    if response.status_code == 200:
        # Shallow enough for the decoder: it parsed, which is fine.
        assert depth < 10_000
    else:
        assert_error_shape(response, 400, "parse_error")


@pytest.mark.parametrize(
    "body",
    [b"{", b"\xff\xfe\x00", b'{"log": NaN}', b"nul", b'"\\ud800"', b"[1, 2,]"],
)
def test_malformed_json_is_a_400_parse_error(body: bytes) -> None:
    response = Client(raise_request_exception=False).post(
        "/api/echo/", body, content_type="application/json"
    )
    assert_error_shape(response, 400, "parse_error")


async def test_a_decompressing_charset_is_refused() -> None:
    # bz2_codec would inflate a tiny body after the size check (DRF refuses it).
    status, content = await asgi_post(
        "/api/echo/",
        b"BZh9",
        [(b"content-type", b"application/json; charset=bz2_codec"), (b"content-length", b"4")],
    )
    assert status == 400
    assert json.loads(content)["error"]["code"] == "parse_error"


@pytest.mark.django_db
@pytest.mark.parametrize("error", [OperationalError, InterfaceError])
def test_a_lost_database_is_a_503_with_retry_after(error: type[Exception]) -> None:
    with mock.patch(
        "django.db.backends.base.base.BaseDatabaseWrapper.ensure_connection",
        side_effect=error("connection refused"),
    ):
        response = Client(raise_request_exception=False).get("/api/players-count/")
    assert_error_shape(response, 503, "service_unavailable")
    assert int(response["Retry-After"]) > 0


@pytest.mark.django_db
def test_the_same_request_succeeds_once_the_database_is_back() -> None:
    client = Client(raise_request_exception=False)
    with mock.patch(
        "django.db.backends.base.base.BaseDatabaseWrapper.ensure_connection",
        side_effect=OperationalError("connection refused"),
    ):
        assert client.get("/api/players-count/").status_code == 503
    response = client.get("/api/players-count/")
    assert response.status_code == 200
    assert response.json() == {"players": 0}


@pytest.mark.django_db
@pytest.mark.urls("easyharp_site.urls")
def test_a_page_gets_a_short_html_503_while_the_database_is_away() -> None:
    with mock.patch(
        "django.db.backends.base.base.BaseDatabaseWrapper.ensure_connection",
        side_effect=OperationalError("connection refused"),
    ):
        response = Client(raise_request_exception=False).get("/leaderboard/")
    assert response.status_code == 503
    assert response["Content-Type"].startswith("text/html")
    assert b"briefly unavailable" in response.content
    assert int(response["Retry-After"]) > 0
