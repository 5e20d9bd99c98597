"""Every request body is capped whatever its content type, before it is read in full.

Multipart bodies used to skip the cap (a 10 MB file part on /api/hint/ and
52 MB on /api/games/ were read and spooled to disk); the API takes no uploads
and now refuses multipart outright, and under ASGI the body is bounded by its
Content-Length and by the bytes actually read.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings

from easyharp_site.asgi import application
from tests.security.conftest import asgi_http_scope, assert_error_shape

pytestmark = pytest.mark.django_db

CAP = 10_000


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=CAP)
@pytest.mark.parametrize("path", ["/api/hint/", "/api/games/", "/api/auth/register/"])
def test_a_multipart_upload_over_the_cap_is_a_413(path: str) -> None:
    upload = SimpleUploadedFile("big.bin", b"x" * (CAP * 3))
    response = Client().post(path, {"deal": "EH1-N-AAAAAAB", "file": upload})
    assert response.status_code == 413
    assert assert_error_shape(response.json())["code"] == "request_too_large"


@pytest.mark.parametrize("path", ["/api/hint/", "/api/auth/token/"])
def test_the_api_refuses_any_multipart_body_with_415(path: str) -> None:
    response = Client().post(path, {"deal": "EH1-N-AAAAAAB", "log": ""})
    assert response.status_code == 415
    assert assert_error_shape(response.json())["code"] == "unsupported_media_type"


@pytest.mark.parametrize("content_type", ["multipart/form-data", "multipart/mixed; boundary="])
def test_a_multipart_body_without_a_boundary_gets_the_error_shape(content_type: str) -> None:
    response = Client().post("/api/hint/", b"--x\r\n\r\n--x--", content_type=content_type)
    assert response.status_code == 415
    assert_error_shape(response.json())


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=CAP)
def test_a_page_form_posted_as_multipart_over_the_cap_is_a_413_too() -> None:
    upload = SimpleUploadedFile("big.bin", b"x" * (CAP * 3))
    response = Client().post("/accounts/login/", {"username": "a", "file": upload})
    assert response.status_code == 413


def test_a_page_form_posted_as_multipart_under_the_cap_still_works() -> None:
    response = Client().post("/accounts/login/", {"username": "nobody", "password": "x"})
    assert response.status_code == 200  # the form again, with its error


async def through_asgi(
    path: str, headers: list[tuple[bytes, bytes]], chunks: int, chunk_size: int = 4096
) -> tuple[int, dict[str, Any], int]:
    """POST `chunks` chunks through the site's ASGI application; (status, body, chunks read)."""
    scope = asgi_http_scope(path, headers)
    read = 0
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal read
        if read < chunks:
            read += 1
            return {"type": "http.request", "body": b"x" * chunk_size, "more_body": read < chunks}
        await asyncio.Event().wait()  # the client stays connected until the response
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await application(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, json.loads(body), read


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=CAP)
async def test_a_long_body_without_a_length_is_cut_off_once_the_cap_is_read() -> None:
    # 20 MB announced by nobody: reading stops just past the cap.
    status, body, read = await through_asgi(
        "/api/hint/", [(b"content-type", b"multipart/form-data; boundary=x")], chunks=5_000
    )
    assert status == 413
    assert body["error"]["code"] == "request_too_large"
    assert read * 4096 <= CAP + 4096


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=CAP)
async def test_a_body_announced_over_the_cap_is_refused_before_any_of_it_is_read() -> None:
    status, body, read = await through_asgi(
        "/api/games/",
        [(b"content-type", b"application/json"), (b"content-length", b"52000000")],
        chunks=12_700,
    )
    assert status == 413
    assert body["error"]["code"] == "request_too_large"
    assert read == 0


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=CAP)
async def test_a_body_under_the_cap_reaches_the_view_whole_under_asgi() -> None:
    status, body, read = await through_asgi(
        "/api/auth/register/",
        [(b"content-type", b"application/json"), (b"content-length", b"8192")],
        chunks=2,
    )
    # 8 KB of "x": read in full and refused by the JSON parser, not by the cap.
    assert (status, body["error"]["code"], read) == (400, "parse_error", 2)
