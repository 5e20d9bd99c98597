"""Websocket guards: a socket to a path nobody serves is refused cleanly (403,
no traceback), and the Origin is compared whole (scheme, host and port)."""

from __future__ import annotations

import logging

import pytest
from channels.testing import WebsocketCommunicator
from django.test import override_settings

from easyharp_site.asgi import application
from games.models import DailyDeal

pytestmark = pytest.mark.django_db(transaction=True)


async def connect(
    path: str, origin: str | None, host: str = "testserver", **scope: object
) -> tuple[bool, object]:
    headers = [(b"host", host.encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    communicator = WebsocketCommunicator(application, path, headers=headers)
    communicator.scope.update(scope)
    try:
        connected, code = await communicator.connect(timeout=5)
    finally:
        await communicator.disconnect()
    return connected, code


@pytest.mark.parametrize(
    "path", ["/ws/nope/", "/ws/daily/2026-01-01/leaderboard", "/", "/api/daily/", "/ws/"]
)
async def test_a_socket_to_an_unrouted_path_is_refused_without_a_traceback(
    path: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        connected, _code = await connect(path, "http://testserver")
    assert connected is False
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


@pytest.fixture
def board(daily: DailyDeal) -> str:
    return f"/ws/daily/{daily.date.isoformat()}/leaderboard/?order=score"


async def test_the_sites_own_origin_opens_the_socket(board: str) -> None:
    assert (await connect(board, "http://testserver"))[0] is True


async def test_the_own_origin_with_its_port_opens_the_socket(board: str) -> None:
    assert (await connect(board, "http://localhost:8000", host="localhost:8000"))[0] is True


@pytest.mark.parametrize(
    ("origin", "host"),
    [
        ("http://localhost:9999", "localhost:8000"),  # another port on an allowed host
        ("http://localhost:9999", "localhost"),
        ("https://testserver", "testserver"),  # another scheme
        ("http://testserver:80", "testserver:8000"),
        ("http://evil.example", "testserver"),
        ("http://testserver.evil.example", "testserver"),
        ("null", "testserver"),
        (None, "testserver"),  # no Origin at all
        ("http://evil.example", "evil.example"),  # a Host outside ALLOWED_HOSTS
    ],
)
async def test_any_other_origin_is_refused(board: str, origin: str | None, host: str) -> None:
    assert (await connect(board, origin, host=host))[0] is False


async def test_a_socket_over_tls_takes_the_https_origin(board: str) -> None:
    assert (await connect(board, "https://testserver", scheme="wss"))[0] is True
    assert (await connect(board, "http://testserver", scheme="wss"))[0] is False


@override_settings(SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https"))
async def test_behind_a_tls_proxy_the_forwarded_scheme_counts(board: str) -> None:
    communicator = WebsocketCommunicator(
        application,
        board,
        headers=[
            (b"host", b"testserver"),
            (b"origin", b"https://testserver"),
            (b"x-forwarded-proto", b"https"),
        ],
    )
    connected, _ = await communicator.connect(timeout=5)
    await communicator.disconnect()
    assert connected is True


@override_settings(
    ALLOWED_HOSTS=["web"],
    CSRF_TRUSTED_ORIGINS=["https://harp.example.com", "https://*.harp.example.org"],
)
@pytest.mark.parametrize(
    ("origin", "opens"),
    [
        ("https://harp.example.com", True),
        ("https://eu.harp.example.org", True),
        ("http://harp.example.com", False),
        ("https://harp.example.com:8443", False),
        ("https://harp.example.org.evil.example", False),
    ],
)
async def test_trusted_origins_open_the_socket_exactly_as_listed(
    board: str, origin: str, opens: bool
) -> None:
    assert (await connect(board, origin, host="web"))[0] is opens
