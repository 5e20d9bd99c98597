"""The edge for real: nginx with deploy/nginx's configuration in front of uvicorn.

The configuration is rendered from the repository's template as the nginx
image renders it (each `${EDGE_...}` replaced), with loopback ports and short
timeouts, and nginx (Debian's package; `.ci/run` installs it) serves it in
front of a uvicorn with the production flags that trusts the proxy alone.
Clients connect from other loopback addresses (127.0.0.5, ...), so the address
the app counts can be told from the proxy's own (127.0.0.1).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

from tests.servers import ROOT, free_port, manage, server_env, uvicorn, wait_for_port

pytestmark = pytest.mark.nginx

NGINX = ROOT / "deploy" / "nginx"
HEADER_TIMEOUT = 2
BODY_TIMEOUT = 2
CONNECTIONS_PER_ADDRESS = 4
RELEASE = "r1"
TODAY = time.strftime("%Y-%m-%d", time.gmtime())


def nginx_binary() -> str:
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")
    assert found, "nginx is not installed"
    return found


def render(template: str, values: dict[str, str]) -> str:
    """The template with each `${NAME}` replaced, as envsubst does in the image."""
    for name, value in values.items():
        template = template.replace("${" + name + "}", value)
    left = re.findall(r"\$\{\w+\}", template)
    assert not left, f"variables of the template without a value: {left}"
    return template


class Edge:
    """nginx serving the rendered configuration on loopback ports, until stopped."""

    def __init__(self, folder: Path, upstream: str, static_root: Path) -> None:
        self.http_port, self.https_port = free_port(), free_port()
        certs = folder / "certs"
        env = {**os.environ, "EDGE_CERTS": str(certs), "EDGE_SERVER_NAME": "localhost"}
        subprocess.run([NGINX / "self-signed-cert.sh"], env=env, check=True, timeout=60)
        site = render(
            (NGINX / "easyharp.conf.template").read_text(),
            {
                "EDGE_SERVER_NAME": "localhost",
                "EDGE_LISTEN_HTTP": f"127.0.0.1:{self.http_port}",
                "EDGE_LISTEN_HTTPS": f"127.0.0.1:{self.https_port}",
                "EDGE_UPSTREAM": upstream,
                "EDGE_STATIC_ROOT": str(static_root),
                "EDGE_CERTS": str(certs),
                "EDGE_HTTPS_REDIRECT": "true",
                "EDGE_HEADER_TIMEOUT": f"{HEADER_TIMEOUT}s",
                "EDGE_BODY_TIMEOUT": f"{BODY_TIMEOUT}s",
                "EDGE_CONNECTIONS_PER_ADDRESS": str(CONNECTIONS_PER_ADDRESS),
            },
        )
        (folder / "easyharp.conf").write_text(site)
        shutil.copy("/etc/nginx/mime.types", folder / "mime.types")
        main = (NGINX / "nginx.conf").read_text()
        include = "include /etc/nginx/conf.d/*.conf;"
        assert include in main
        main = main.replace(
            include, f"access_log {folder}/access.log; include {folder}/easyharp.conf;"
        )
        (folder / "nginx.conf").write_text(main)
        # Run as root (CI), the workers would be `nobody`, who cannot read the test's files.
        user = "user root;" if os.geteuid() == 0 else ""
        globals_ = f"daemon off; pid {folder}/nginx.pid; error_log {folder}/error.log; {user}"
        self.process = subprocess.Popen(
            [nginx_binary(), "-p", str(folder), "-c", str(folder / "nginx.conf"), "-g", globals_],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            wait_for_port(self.https_port, self.process)
            wait_for_port(self.http_port, self.process)
        except RuntimeError:
            self.stop()
            raise RuntimeError(f"nginx did not start: {self.process.stderr.read()}") from None  # type: ignore[union-attr]

    @property
    def https(self) -> str:
        return f"https://127.0.0.1:{self.https_port}"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def insecure_tls() -> ssl.SSLContext:
    """TLS without checking the edge's self-signed certificate."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    return context


def client(address: str = "127.0.0.1") -> httpx.Client:
    """An HTTPS client connecting from the loopback `address` (to the self-signed edge)."""
    transport = httpx.HTTPTransport(local_address=address, verify=False)
    return httpx.Client(transport=transport, timeout=10)


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Edge]:
    folder = tmp_path_factory.mktemp("edge")
    static_root = folder / "static"
    env = server_env(
        folder / "db.sqlite3",
        STATIC_URL=f"/static/{RELEASE}/",
        STATIC_ROOT=str(static_root),
        SECURE_PROXY_SSL_HEADER="true",
        THROTTLE_SIGNUP="3/day",
    )
    manage(env, "collectstatic", "--noinput", "--verbosity", "0")
    with uvicorn(env, days=[TODAY], server_args=["--forwarded-allow-ips=127.0.0.1"]) as server:
        (folder / "nginx").mkdir()
        running = Edge(folder / "nginx", server, static_root)
        try:
            yield running
        finally:
            running.stop()


def test_plain_http_is_sent_to_https_except_the_health_check(edge: Edge) -> None:
    plain = f"http://127.0.0.1:{edge.http_port}"
    page = httpx.get(f"{plain}/play/?deal=EH1-N-AAAAAAB", headers={"Host": "localhost"})
    health = httpx.get(f"{plain}/healthz/")

    assert page.status_code == 301
    assert page.headers["location"] == "https://localhost/play/?deal=EH1-N-AAAAAAB"
    assert health.status_code == 200 and health.json() == {"status": "ok"}


def test_a_page_the_api_and_the_static_files_pass_over_tls(edge: Edge) -> None:
    with client() as http:
        page = http.get(f"{edge.https}/", headers={"Accept-Encoding": "gzip"})
        daily = http.get(f"{edge.https}/api/daily/")
        script = http.get(
            f"{edge.https}/static/{RELEASE}/games/engine.js", headers={"Accept-Encoding": "gzip"}
        )

    assert page.status_code == 200 and page.headers["content-encoding"] == "gzip"
    # The page names its static files under the release, which the edge serves itself.
    assert f'href="/static/{RELEASE}/games/site.css"' in page.text
    assert daily.status_code == 200 and daily.json()["date"] == TODAY
    assert script.status_code == 200
    assert script.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert script.headers["content-encoding"] == "gzip"
    assert script.text == (ROOT / "games" / "static" / "games" / "engine.js").read_text()


async def test_a_live_board_passes_as_a_websocket(edge: Edge) -> None:
    context = insecure_tls()
    url = f"wss://127.0.0.1:{edge.https_port}/ws/daily/{TODAY}/leaderboard/?order=score"
    async with websockets.connect(url, origin=edge.https, ssl=context) as socket_:  # type: ignore[arg-type]
        snapshot = json.loads(await asyncio.wait_for(socket_.recv(), 10))
        await socket_.send(json.dumps({"type": "ping"}))
        pong = json.loads(await asyncio.wait_for(socket_.recv(), 10))

    assert snapshot["type"] == "snapshot" and snapshot["total"] == 0
    assert pong["type"] == "pong"


def seconds_until_closed(sock: socket.socket, limit: float) -> tuple[float, bytes]:
    """Wait (reading) until the edge closes the connection; the time it took and what it sent."""
    started = time.monotonic()
    sock.settimeout(limit)
    received = b""
    while chunk := sock.recv(4096):
        received += chunk
    return time.monotonic() - started, received


def test_a_request_whose_headers_stall_is_cut_within_the_header_timeout(edge: Edge) -> None:
    with socket.create_connection(("127.0.0.1", edge.http_port), timeout=5) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n")
        waited, received = seconds_until_closed(sock, limit=HEADER_TIMEOUT + 5)

    assert HEADER_TIMEOUT - 0.5 <= waited <= HEADER_TIMEOUT + 3
    assert not received.startswith(b"HTTP/1.1 200")


def test_a_request_whose_body_stalls_is_cut_within_the_body_timeout(edge: Edge) -> None:
    head = (
        b"POST /api/auth/register/ HTTP/1.1\r\nHost: localhost\r\n"
        b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    )
    # Over TLS, as the edge serves requests (plain HTTP is answered with a redirect unread).
    with (
        socket.create_connection(("127.0.0.1", edge.https_port), timeout=5) as raw,
        insecure_tls().wrap_socket(raw) as sock,
    ):
        sock.sendall(head + b'{"username": ')
        waited, received = seconds_until_closed(sock, limit=BODY_TIMEOUT + 5)

    assert BODY_TIMEOUT - 0.5 <= waited <= BODY_TIMEOUT + 3
    assert received == b"" or received.startswith(b"HTTP/1.1 408")


def sign_up(edge: Edge, address: str, username: str, forwarded_for: str | None = None) -> int:
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    with client(address) as http:
        response = http.post(
            f"{edge.https}/api/auth/register/",
            json={"username": username, "password": "a long passphrase"},
            headers=headers,
        )
    return response.status_code


def test_the_rate_limits_count_the_client_address_not_one_it_wrote(edge: Edge) -> None:
    # THROTTLE_SIGNUP=3/day: three sign-ups from an address, then 429.
    assert [sign_up(edge, "127.0.0.5", f"first{n}") for n in range(4)] == [201, 201, 201, 429]
    # Another address has its own allowance: the app sees each client, not the proxy.
    assert sign_up(edge, "127.0.0.6", "second") == 201
    # A forged X-Forwarded-For neither escapes the limit nor spends another's.
    assert sign_up(edge, "127.0.0.5", "forger", forwarded_for="198.51.100.7") == 429
    assert sign_up(edge, "127.0.0.7", "framed", forwarded_for="127.0.0.5") == 201


async def test_an_address_holding_too_many_connections_is_refused_others_are_not(
    edge: Edge,
) -> None:
    context = insecure_tls()
    url = f"wss://127.0.0.1:{edge.https_port}/ws/daily/{TODAY}/leaderboard/?order=score"
    held = []
    try:
        for _ in range(CONNECTIONS_PER_ADDRESS):
            opened = await websockets.connect(
                url, origin=edge.https, ssl=context, local_addr=("127.0.0.8", 0)
            )
            held.append(opened)
            await asyncio.wait_for(opened.recv(), 10)  # its snapshot: the request is under way
        with client("127.0.0.8") as crowded, client("127.0.0.9") as other:
            refused = await asyncio.to_thread(crowded.get, f"{edge.https}/api/daily/")
            served = await asyncio.to_thread(other.get, f"{edge.https}/api/daily/")
    finally:
        for opened in held:
            await opened.close()

    assert refused.status_code == 429
    assert served.status_code == 200


class Recorder(BaseHTTPRequestHandler):
    """An upstream that answers 200 and keeps the headers of the last request."""

    seen: dict[str, Any] = {}

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        Recorder.seen = {name.lower(): value for name, value in self.headers.items()}
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def test_the_edge_overwrites_a_forwarded_for_the_client_wrote(tmp_path: Path) -> None:
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    (tmp_path / "nginx").mkdir()
    recording = Edge(tmp_path / "nginx", f"127.0.0.1:{upstream.server_port}", tmp_path)
    try:
        with client("127.0.0.10") as http:
            response = http.get(
                f"{recording.https}/anything/",
                headers={"X-Forwarded-For": "198.51.100.7", "Forwarded": "for=198.51.100.7"},
            )
    finally:
        recording.stop()
        upstream.shutdown()

    assert response.status_code == 200
    assert Recorder.seen["x-forwarded-for"] == "127.0.0.10"
    assert Recorder.seen["x-forwarded-proto"] == "https"
    assert "forwarded" not in Recorder.seen
    assert Recorder.seen["host"] == f"127.0.0.1:{recording.https_port}"
