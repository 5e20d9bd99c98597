"""The ASGI server's own limits, over real sockets: uvicorn started with the
command line of docker-compose.yml (`tests.servers`), on a loopback port and a
throwaway SQLite database. Frames over the cap are refused by the server before
the application sees them; the server stays up; HTTP bodies over the cap get
the 413 shape; header values that could smuggle headers are refused; sockets
that go away while they connect leave the live-board hub; the live boards
write their updates through the frame writer; forwarded addresses count only
from the proxies the server is told to trust.

The server serves the site through `tests.security.hub_probe`, which passes
every request on unchanged and adds paths that tell what the hub holds and
what address and scheme a request was given."""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import websockets
from websockets.exceptions import ConnectionClosed

from tests.servers import production_command, uvicorn


def compose_flag(name: str) -> int:
    found = [
        flag.split("=", 1)[1] for flag in production_command() if flag.startswith(f"--{name}=")
    ]
    assert found, f"docker-compose.yml does not set --{name}"
    return int(found[-1])


# One cap for both: a frame longer than the largest message is refused as it starts.
MAX_MESSAGE = MAX_FRAME = compose_flag("ws-max-size")


# What the hub holds, answered by tests/security/hub_probe.py (not imported here:
# it wraps the hub of the process that imports it).
PROBE_PATH = "/test-probe/hub/"
# The day the sockets watch: prepared by the fixture (reads never create a day).
DAY = "2026-01-01"


@pytest.fixture(scope="module")
def server_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What the server wrote to stderr (its log)."""
    return tmp_path_factory.mktemp("server-log") / "server.log"


def server_env(database: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "DATABASE_URL"}},
        "DATABASE_URL": f"sqlite:///{database}",
        "DEBUG": "false",
        "SECRET_KEY": "server-limits-test-" + "k" * 40,
        "DAILY_DEAL_SALT": "server-limits-test",
        "DAILY_DEAL_REQUIRE_WIN": "false",
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "false",
        "SECURE_COOKIES": "false",
        "REQUEST_MAX_BODY_BYTES": "100000",
        # Every socket here comes from loopback, hundreds at once.
        "SOCKETS_PER_ADDRESS": "100000",
        "SOCKET_CONNECT_BURST": "100000",
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, server_log: Path) -> Iterator[str]:
    """The production command line as it stands, with no proxy trusted (compose's default)."""
    env = server_env(tmp_path_factory.mktemp("server") / "db.sqlite3")
    with uvicorn(
        env, days=[DAY], app="tests.security.hub_probe:application", stderr=server_log.open("wb")
    ) as address:
        yield address


@pytest.fixture(scope="module")
def proxied_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The same behind a proxy on loopback: FORWARDED_ALLOW_IPS lists 127.0.0.1."""
    env = server_env(tmp_path_factory.mktemp("proxied") / "db.sqlite3")
    with uvicorn(
        env,
        days=[DAY],
        app="tests.security.hub_probe:application",
        server_args=["--forwarded-allow-ips=127.0.0.1"],
    ) as address:
        yield address


def probe(server: str, **query: float) -> dict[str, int]:
    """What the server's live-board hub holds (after applying `query`, see hub_probe)."""
    path = f"{PROBE_PATH}?{urlencode(query)}"
    response = raw_http(
        server, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
    )
    assert response.startswith(b"HTTP/1.1 200"), response[:200]
    return json.loads(response.split(b"\r\n\r\n", 1)[1])


async def probe_until(server: str, condition: Callable[[dict[str, int]], bool]) -> dict[str, int]:
    """Ask the hub until `condition` holds of its answer (a few seconds at most)."""
    for _ in range(100):
        held = await asyncio.to_thread(probe, server)
        if condition(held):
            break
        await asyncio.sleep(0.1)
    return held


def ws_url(server: str) -> str:
    return f"ws://{server}/ws/daily/{DAY}/leaderboard/?order=score"


async def open_socket(server: str) -> websockets.ClientConnection:
    connection = await websockets.connect(
        ws_url(server), origin=f"http://{server}", max_size=None, open_timeout=10
    )
    snapshot = json.loads(await asyncio.wait_for(connection.recv(), 10))
    assert snapshot["type"] == "snapshot"
    return connection


async def ping(connection: websockets.ClientConnection) -> dict:
    await connection.send(json.dumps({"type": "ping"}))
    return json.loads(await asyncio.wait_for(connection.recv(), 10))


async def test_a_message_over_the_server_cap_closes_that_socket_and_nothing_else(
    server: str,
) -> None:
    bystander = await open_socket(server)
    attacker = await open_socket(server)
    # Just under the cap the application sees the message (and refuses it itself)...
    await attacker.send("x" * (MAX_MESSAGE - 16))
    answer = json.loads(await asyncio.wait_for(attacker.recv(), 10))
    assert answer["error"]["code"] == "message_too_large"
    # ...one byte over, the server drops the socket (1009, or a bare close
    # while the client is still writing) and the application never answers.
    await attacker.send("x" * (MAX_MESSAGE + 1))
    with pytest.raises(ConnectionClosed) as closed:
        await asyncio.wait_for(attacker.recv(), 10)
    assert closed.value.rcvd is None or closed.value.rcvd.code == 1009
    # The server is up and other sockets are untouched.
    assert await ping(bystander) == {"type": "pong"}
    fresh = await open_socket(server)
    assert await ping(fresh) == {"type": "pong"}
    await bystander.close()
    await fresh.close()


async def test_a_fragmented_message_over_the_cap_is_refused_too(server: str) -> None:
    attacker = await open_socket(server)
    chunk = "y" * (MAX_FRAME // 2)
    with pytest.raises(ConnectionClosed) as closed:
        await attacker.send(iter([chunk] * 6))  # six frames, each under the frame cap
        await asyncio.wait_for(attacker.recv(), 10)
    assert closed.value.rcvd is None or closed.value.rcvd.code == 1009


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        (b"\x00\xff\xfe binary", "binary_not_supported"),
        ("{not json", "invalid_json"),
        ("[" * 500 + "]" * 500, "unknown_message"),
        ("z" * 5_000, "message_too_large"),
        (json.dumps({"type": "subscribe", "order": "moves"}), "unknown_message"),
    ],
)
async def test_odd_frames_under_the_cap_get_an_error_and_the_socket_stays_open(
    server: str, frame: str | bytes, code: str
) -> None:
    connection = await open_socket(server)
    await connection.send(frame)
    answer = json.loads(await asyncio.wait_for(connection.recv(), 10))
    assert answer["type"] == "error"
    assert answer["error"]["code"] in {code, "invalid_json"}
    assert await ping(connection) == {"type": "pong"}
    await connection.close()


async def test_a_socket_from_another_origin_is_refused(server: str) -> None:
    with pytest.raises(websockets.InvalidStatus) as refused:
        await websockets.connect(ws_url(server), origin="http://evil.example", open_timeout=10)
    assert refused.value.response.status_code == 403


SOCKETS_AT_ONCE = 300


async def test_sockets_that_go_away_while_they_connect_leave_the_hub(server: str) -> None:
    """Hundreds of sockets open at once and go away before their snapshot (half
    with a close frame, half by dropping the connection): the hub keeps none.

    Their snapshot reads are held back, as by a busy database, so that every
    socket is still connecting when it goes: daphne used to kill such consumers
    ten seconds later ("took too long to shut down") without `disconnect`, and
    the hub kept them for good. Each of them holds a frame writer: the server
    is the one whose sockets the live boards write to directly."""
    probe(server, snapshot_delay=30)
    try:

        async def open_connecting(number: int) -> websockets.ClientConnection:
            # No snapshot awaited: the handshake is answered before the read.
            return await websockets.connect(
                ws_url(server), origin=f"http://{server}", open_timeout=60
            )

        connections = await asyncio.gather(*(open_connecting(n) for n in range(SOCKETS_AT_ONCE)))
        held = await probe_until(server, lambda held: held["sockets"] == SOCKETS_AT_ONCE)
        assert held == {"sockets": SOCKETS_AT_ONCE, "boards": 1, "framed": SOCKETS_AT_ONCE}

        for number, connection in enumerate(connections):
            if number % 2:
                connection.transport.abort()
        await asyncio.gather(*(c.close() for n, c in enumerate(connections) if not n % 2))

        assert await probe_until(server, lambda held: held["sockets"] == 0) == {
            "sockets": 0,
            "boards": 0,
            "framed": 0,
        }
    finally:
        probe(server, snapshot_delay=0)
    # The server is fine: a new socket gets its snapshot at once.
    fresh = await open_socket(server)
    assert await ping(fresh) == {"type": "pong"}
    await fresh.close()


def raw_http(server: str, request: bytes, *, head_only: bool = False, timeout: float = 10) -> bytes:
    """Send raw bytes; read the answer until the server closes (or its head, if asked)."""
    host, port = server.split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(request)
        received = b""
        while not (head_only and b"\r\n\r\n" in received):
            try:
                data = sock.recv(65536)
            except (ConnectionResetError, TimeoutError):
                break
            if not data:
                break
            received += data
    return received


def test_an_http_body_over_the_cap_is_a_413_in_the_error_shape(server: str) -> None:
    body = json.dumps({"deal": "EH1-N-AAAAAAB", "log": "S " * 60_000}).encode()
    response = raw_http(
        server,
        b"POST /api/auth/register/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
        % len(body)
        + body,
    )
    assert response.startswith(b"HTTP/1.1 413"), response[:200]
    assert b'"request_too_large"' in response


def post_raw(server: str, path: str, content_type: bytes, body: bytes) -> bytes:
    return raw_http(
        server,
        b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\n"
        b"Content-Length: %d\r\nConnection: close\r\n\r\n"
        % (path.encode(), content_type, len(body))
        + body,
    )


def error_of(response: bytes) -> dict:
    head, body = response.split(b"\r\n\r\n", 1)
    if b"transfer-encoding: chunked" in head.lower():
        chunks = b""
        while True:
            size_line, body = body.split(b"\r\n", 1)
            size = int(size_line, 16)
            if size == 0:
                break
            chunks, body = chunks + body[:size], body[size + 2 :]
        body = chunks
    return json.loads(body)["error"]


@pytest.mark.parametrize(
    ("content_type", "size"),
    [
        (b"multipart/form-data; boundary=x", 300_000),  # not multipart at all inside
        (b"multipart/form-data", 300_000),  # no boundary
        (b"multipart/form-data; boundary=x", 50),
    ],
)
def test_multipart_bodies_are_refused_by_the_application_in_the_error_shape(
    server: str, content_type: bytes, size: int
) -> None:
    # The server itself used to parse multipart bodies (which the application
    # never uses) and answer an unparseable one with an empty 400.
    response = post_raw(server, "/api/hint/", content_type, b"x" * size)
    status = 413 if size > 100_000 else 415
    assert response.startswith(b"HTTP/1.1 %d" % status), response[:200]
    assert error_of(response)["code"] in {"request_too_large", "unsupported_media_type"}


def test_a_valid_multipart_upload_over_the_cap_is_a_413(server: str) -> None:
    body = (
        b'--x\r\nContent-Disposition: form-data; name="f"; filename="a.bin"\r\n\r\n'
        + b"y" * 300_000
        + b"\r\n--x--\r\n"
    )
    response = post_raw(server, "/api/games/", b"multipart/form-data; boundary=x", body)
    assert response.startswith(b"HTTP/1.1 413"), response[:200]
    assert error_of(response)["code"] == "request_too_large"


@pytest.mark.parametrize("path", ["/ws/nope/", f"/ws/daily/{DAY}/leaderboard", "/"])
async def test_a_socket_to_an_unrouted_path_is_a_403(server: str, path: str) -> None:
    with pytest.raises(websockets.InvalidStatus) as refused:
        await websockets.connect(f"ws://{server}{path}", origin=f"http://{server}", open_timeout=10)
    assert refused.value.response.status_code == 403


async def test_a_socket_from_the_right_host_at_another_port_is_refused(server: str) -> None:
    with pytest.raises(websockets.InvalidStatus) as refused:
        await websockets.connect(ws_url(server), origin="http://127.0.0.1:9999", open_timeout=10)
    assert refused.value.response.status_code == 403


def test_trace_is_a_405_and_pages_carry_a_policy_and_the_api_renders_json_only(
    server: str,
) -> None:
    trace = raw_http(server, b"TRACE / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    assert trace.startswith(b"HTTP/1.1 405"), trace[:200]
    assert error_of(trace)["code"] == "method_not_allowed"
    page = raw_http(server, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    assert b"\r\nContent-Security-Policy: " in page.split(b"\r\n\r\n")[0]
    api = raw_http(
        server,
        b"GET /api/daily/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/html\r\n"
        b"Connection: close\r\n\r\n",
    )
    head = api.split(b"\r\n\r\n")[0]
    assert b"Content-Type: application/json" in head, head


SEPARATORS = [b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e"]


@pytest.mark.parametrize("separator", SEPARATORS)
def test_header_values_that_could_smuggle_a_header_are_refused(
    server: str, separator: bytes
) -> None:
    """No socket opens with a header value holding a character that some parsers
    split lines on (Python's `str.splitlines` does on all five). h11 answers
    \\x0b and \\x0c with a 400; \\x1c to \\x1e it keeps inside the value, and
    the websocket handshake's own parser (websockets) then refuses the request
    without an answer: nothing reaches the application either way."""
    response = raw_http(
        server,
        b"GET /ws/daily/2026-01-01/leaderboard/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        b"Origin: http://127.0.0.1" + separator + b"Cookie: sessionid=stolen\r\n\r\n",
        head_only=True,
        timeout=3,
    )
    assert response == b"" or response.startswith(b"HTTP/1.1 400"), response[:200]
    assert probe(server)["sockets"] == 0


@pytest.mark.parametrize("separator", SEPARATORS)
def test_a_header_value_with_a_line_separator_smuggles_no_header_into_a_request(
    server: str, separator: bytes
) -> None:
    response = raw_http(
        server,
        b"GET /test-probe/client/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Origin: http://127.0.0.1" + separator + b"Cookie: sessionid=stolen\r\n"
        b"Connection: close\r\n\r\n",
    )
    if response.startswith(b"HTTP/1.1 200"):
        assert json.loads(response.split(b"\r\n\r\n", 1)[1])["cookies"] == []
    else:
        assert response.startswith(b"HTTP/1.1 400"), response[:200]


def client_seen(server: str, headers: bytes = b"") -> dict[str, Any]:
    """The client address and scheme the server gives a request with `headers`."""
    response = raw_http(
        server,
        b"GET /test-probe/client/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + headers
        + b"Connection: close\r\n\r\n",
    )
    assert response.startswith(b"HTTP/1.1 200"), response[:200]
    return json.loads(response.split(b"\r\n\r\n", 1)[1])


FORWARDED = b"X-Forwarded-For: 198.51.100.7, 203.0.113.9\r\nX-Forwarded-Proto: https\r\n"


def test_forwarded_headers_from_a_client_that_is_no_trusted_proxy_change_nothing(
    server: str,
) -> None:
    assert client_seen(server, FORWARDED) == {
        "client": "127.0.0.1",
        "scheme": "http",
        "cookies": [],
    }


def test_behind_a_trusted_proxy_the_address_it_saw_counts_not_one_the_client_wrote(
    proxied_server: str,
) -> None:
    # The proxy (127.0.0.1, trusted) appended 203.0.113.9, the address it saw;
    # 198.51.100.7 is what the client wrote itself.
    seen = client_seen(proxied_server, FORWARDED)
    assert (seen["client"], seen["scheme"]) == ("203.0.113.9", "https")
    seen = client_seen(proxied_server)
    assert (seen["client"], seen["scheme"]) == ("127.0.0.1", "http")


async def test_a_tls_origin_is_accepted_only_through_a_trusted_proxy(
    server: str, proxied_server: str
) -> None:
    for address, accepted in ((proxied_server, True), (server, False)):
        opening = websockets.connect(
            ws_url(address),
            origin=f"https://{address}",
            additional_headers={"X-Forwarded-Proto": "https"},
            open_timeout=10,
        )
        if accepted:
            async with opening as connection:
                snapshot = json.loads(await asyncio.wait_for(connection.recv(), 10))
                assert snapshot["type"] == "snapshot"
        else:
            with pytest.raises(websockets.InvalidStatus) as refused:
                await opening
            assert refused.value.response.status_code == 403


def test_the_server_answered_every_case_and_is_still_healthy(server: str) -> None:
    response = raw_http(
        server, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    assert response.startswith(b"HTTP/1.1 200"), response[:200]


def test_no_case_left_a_traceback_in_the_server_log(server: str, server_log: Path) -> None:
    assert "Traceback" not in server_log.read_text(errors="replace")
