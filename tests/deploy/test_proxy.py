"""The edge for real: nginx with deploy/nginx's configuration in front of uvicorn.

The configuration is rendered from the repository's template as the edge image
renders it (deploy/nginx/render.py), with loopback ports and short
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
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

from deploy.nginx.render import RenderError, site_render
from tests.servers import ROOT, free_port, manage, server_env, uvicorn, wait_for_port

pytestmark = pytest.mark.nginx

NGINX = ROOT / "deploy" / "nginx"
HEADER_TIMEOUT = 2
BODY_TIMEOUT = 2
CONNECTIONS_PER_ADDRESS = 4
# Requests to the heavy routes per address: one a minute, after a burst of two more.
HEAVY_RATE, HEAVY_BURST = "1r/m", 2
RELEASE = "r1"
TODAY = time.strftime("%Y-%m-%d", time.gmtime())


def nginx_binary() -> str:
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")
    assert found, "nginx is not installed"
    return found


def edge_values(
    folder: Path, *, http_port: int, https_port: int, upstreams: str, **overrides: str
) -> dict[str, str]:
    """The EDGE_ variables for an edge on loopback ports (as docker-compose.yml sets them)."""
    certs = folder / "certs"
    if not (certs / "fullchain.pem").exists():
        env = {**os.environ, "EDGE_CERTS": str(certs), "EDGE_SERVER_NAME": "localhost"}
        subprocess.run([NGINX / "self-signed-cert.sh"], env=env, check=True, timeout=60)
    return {
        "EDGE_SERVER_NAME": "localhost",
        "EDGE_LISTEN_HTTP": f"127.0.0.1:{http_port}",
        "EDGE_LISTEN_HTTPS": f"127.0.0.1:{https_port}",
        "EDGE_HTTPS_PORT": str(https_port),
        "EDGE_UPSTREAMS": upstreams,
        "EDGE_STATIC_ROOT": str(folder),
        "EDGE_CERTS": str(certs),
        "EDGE_HTTPS_REDIRECT": "true",
        "EDGE_HEADER_TIMEOUT": f"{HEADER_TIMEOUT}s",
        "EDGE_BODY_TIMEOUT": f"{BODY_TIMEOUT}s",
        "EDGE_CONNECTIONS_PER_ADDRESS": str(CONNECTIONS_PER_ADDRESS),
        "EDGE_HEAVY_RATE": HEAVY_RATE,
        "EDGE_HEAVY_BURST": str(HEAVY_BURST),
        "EDGE_REQUEST_RATE": "20r/s",
        "EDGE_REQUEST_BURST": "200",
        "EDGE_SOCKET_CONNECT_RATE": "20r/s",
        "EDGE_SOCKET_CONNECT_BURST": "100",
        "EDGE_KEEPALIVE_TIMEOUT": "10s",
        **overrides,
    }


def main_config(folder: Path, *, globals_: str = "") -> Path:
    """nginx.conf of the image, including the site rendered into `folder`, for `nginx -p folder`."""
    shutil.copy("/etc/nginx/mime.types", folder / "mime.types")
    main = (NGINX / "nginx.conf").read_text()
    include = "include /etc/nginx/conf.d/*.conf;"
    assert include in main
    main = main.replace(include, f"access_log {folder}/access.log; include {folder}/easyharp.conf;")
    (folder / "nginx.conf").write_text(globals_ + main)
    return folder / "nginx.conf"


def rendered_site(folder: Path, values: dict[str, str]) -> None:
    """The site's configuration rendered by deploy/nginx/render.py, as the edge image runs it."""
    result = subprocess.run(
        [sys.executable, NGINX / "render.py", NGINX / "easyharp.conf.template",
         folder / "easyharp.conf"],
        env={"PATH": os.environ["PATH"], **values}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr


class Edge:
    """nginx serving the rendered configuration on loopback ports, until stopped.

    `https_port_seen` is the HTTPS port clients are told of, when a port
    mapping stands between them and nginx (compose's HTTPS_PORT)."""

    def __init__(
        self,
        folder: Path,
        upstreams: str,
        static_root: Path,
        *,
        https_port_seen: int | None = None,
        limits: dict[str, str] | None = None,
    ) -> None:
        self.http_port, self.https_port = free_port(), free_port()
        values = edge_values(
            folder,
            http_port=self.http_port,
            https_port=self.https_port,
            upstreams=upstreams,
            **(limits or {}),
        )
        values["EDGE_STATIC_ROOT"] = str(static_root)
        if https_port_seen is not None:
            values["EDGE_HTTPS_PORT"] = str(https_port_seen)
        rendered_site(folder, values)
        main_config(folder)
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
    page = httpx.get(
        f"{plain}/play/?deal=EH1-N-AAAAAAB", headers={"Host": f"localhost:{edge.http_port}"}
    )
    health = httpx.get(f"{plain}/healthz/")

    # To the HTTPS port, not HTTPS's default one: the edge here serves it on another.
    assert page.status_code == 301
    assert (
        page.headers["location"] == f"https://localhost:{edge.https_port}/play/?deal=EH1-N-AAAAAAB"
    )
    with client() as http:
        followed = http.get(page.headers["location"].replace("localhost", "127.0.0.1"))
    assert followed.status_code == 200
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
    # The port of the upstream that answered each request.
    ports: list[int] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        Recorder.seen = {name.lower(): value for name, value in self.headers.items()}
        Recorder.ports.append(self.server.server_address[1])
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


@pytest.mark.parametrize("heavy", ["/api/hint/", "/api/games/12/replay/", "/cards/days/x.png"])
def test_the_edge_limits_the_heavy_routes_per_address_and_not_the_pages(
    tmp_path: Path, heavy: str
) -> None:
    with recorders(1) as [port]:
        (tmp_path / "nginx").mkdir()
        edge = Edge(tmp_path / "nginx", f"127.0.0.1:{port}", tmp_path)
        try:
            with client("127.0.0.11") as flood, client("127.0.0.12") as other:
                heavy_answers = [flood.get(f"{edge.https}{heavy}").status_code for _ in range(5)]
                pages = [flood.get(f"{edge.https}/").status_code for _ in range(10)]
                elsewhere = other.get(f"{edge.https}{heavy}").status_code
        finally:
            edge.stop()

    assert heavy_answers == [200] * (1 + HEAVY_BURST) + [429] * (4 - HEAVY_BURST)
    assert pages == [200] * 10
    assert elsewhere == 200


@contextmanager
def recorders(count: int) -> Iterator[list[int]]:
    """`count` upstreams answering 200 on loopback; their ports."""
    Recorder.ports = []
    servers = [ThreadingHTTPServer(("127.0.0.1", 0), Recorder) for _ in range(count)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield [server.server_port for server in servers]
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def test_the_edge_shares_the_requests_among_every_upstream_listed(tmp_path: Path) -> None:
    with recorders(3) as ports:
        (tmp_path / "nginx").mkdir()
        listed = " ".join(f"127.0.0.1:{port}" for port in ports)
        edge = Edge(tmp_path / "nginx", listed, tmp_path)
        try:
            with client() as http:
                answers = [http.get(f"{edge.https}/anything/").status_code for _ in range(9)]
        finally:
            edge.stop()

    assert answers == [200] * 9
    assert sorted(set(Recorder.ports)) == sorted(ports)


@contextmanager
def limited_edge(tmp_path: Path, **limits: str) -> Iterator[Edge]:
    """An edge in front of one recording upstream, with these EDGE_ limits."""
    with recorders(1) as (port,):
        (tmp_path / "nginx").mkdir()
        edge = Edge(tmp_path / "nginx", f"127.0.0.1:{port}", tmp_path, limits=limits)
        try:
            yield edge
        finally:
            edge.stop()


def test_an_address_past_its_socket_connects_is_refused_others_and_other_routes_are_not(
    tmp_path: Path,
) -> None:
    # A rate of one a minute: the burst of 2 (three at once) is all an address has.
    with (
        limited_edge(
            tmp_path, EDGE_SOCKET_CONNECT_RATE="1r/m", EDGE_SOCKET_CONNECT_BURST="2"
        ) as edge,
        client("127.0.0.11") as crowded,
        client("127.0.0.12") as other,
    ):
        sockets = [crowded.get(f"{edge.https}/ws/races/x/").status_code for _ in range(5)]
        page = crowded.get(f"{edge.https}/play/").status_code
        others = other.get(f"{edge.https}/ws/races/x/").status_code

    assert sockets == [200, 200, 200, 429, 429]
    assert page == 200
    assert others == 200


def one_request(
    edge: Edge, address: str, sock: ssl.SSLSocket | None = None
) -> tuple[int, ssl.SSLSocket]:
    """Send one keep-alive request from `address` (on `sock`, or a new connection);
    its status, once its headers are in, and the connection."""
    if sock is None:
        raw = socket.create_connection(
            ("127.0.0.1", edge.https_port), timeout=10, source_address=(address, 0)
        )
        sock = insecure_tls().wrap_socket(raw)
    sock.sendall(b"GET /anything/ HTTP/1.1\r\nHost: localhost\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        assert chunk, head
        head += chunk
    return int(head.split()[1]), sock


def test_idle_keep_alive_connections_of_an_address_are_bounded_by_its_requests(
    tmp_path: Path,
) -> None:
    # limit_conn counts a connection only while a request is in hand: an idle
    # keep-alive one is held by the request rate instead, each refusal closing its
    # connection. One request a minute and a burst of 2: three connections stay.
    with limited_edge(tmp_path, EDGE_REQUEST_RATE="1r/m", EDGE_REQUEST_BURST="2") as edge:
        answered = [one_request(edge, "127.0.0.13") for _ in range(6)]
        statuses = [status for status, _ in answered]
        kept = [sock for status, sock in answered if status == 200]
        refused = [sock for status, sock in answered if status == 429]
        # The edge closes each refused connection (reading ends), and keeps the others.
        for sock in refused:
            seconds_until_closed(sock, limit=10)
        again = [one_request(edge, "127.0.0.13", sock)[0] for sock in kept]
        other = one_request(edge, "127.0.0.14")[0]
        for sock in kept + refused:
            sock.close()

    assert statuses == [200, 200, 200, 429, 429, 429]
    assert again == [429, 429, 429]
    assert other == 200


def test_the_redirect_names_no_port_when_clients_reach_https_on_443(tmp_path: Path) -> None:
    # As in compose: nginx listens on its own port, published to clients as 443.
    with recorders(1) as (port,):
        (tmp_path / "nginx").mkdir()
        edge = Edge(tmp_path / "nginx", f"127.0.0.1:{port}", tmp_path, https_port_seen=443)
        try:
            answer = httpx.get(
                f"http://127.0.0.1:{edge.http_port}/play/", headers={"Host": "localhost:8080"}
            )
        finally:
            edge.stop()

    assert answer.status_code == 301
    assert answer.headers["location"] == "https://localhost/play/"


def test_a_site_with_several_upstreams_and_other_ports_passes_nginx_t(tmp_path: Path) -> None:
    values = edge_values(
        tmp_path,
        http_port=28080,
        https_port=28443,
        upstreams="127.0.0.1:8001 127.0.0.1:8002,\n localhost:8003",
    )
    rendered_site(tmp_path, values)
    config = main_config(tmp_path)
    site = (tmp_path / "easyharp.conf").read_text()
    user = "user root;" if os.geteuid() == 0 else ""
    checked = subprocess.run(
        [nginx_binary(), "-t", "-p", str(tmp_path), "-c", str(config),
         "-g", f"pid {tmp_path}/nginx.pid; error_log {tmp_path}/error.log; {user}"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip

    assert checked.returncode == 0, checked.stderr
    assert "test is successful" in checked.stderr
    upstream = site.split("upstream easyharp {", 1)[1].split("}", 1)[0]
    servers = [line.strip() for line in upstream.splitlines() if "server " in line]
    assert servers == [
        "server 127.0.0.1:8001;",
        "server 127.0.0.1:8002;",
        "server localhost:8003;",
    ]
    assert 'map "28443" $https_port_suffix' in site
    # nginx's own variables are left for nginx.
    assert "return 301 https://$host$https_port_suffix$request_uri;" in site
    assert "$binary_remote_addr" in site and "$http_upgrade" in site


def test_rendering_names_every_variable_not_set() -> None:
    template = "listen ${EDGE_A};\nserver ${EDGE_UPSTREAMS};\nset $own ${EDGE_B};\n"

    with pytest.raises(RenderError, match=r"not set: EDGE_B, EDGE_UPSTREAMS$"):
        site_render(template, {"EDGE_A": "80", "EDGE_UPSTREAMS": "  "})
    assert site_render(template, {"EDGE_A": "80", "EDGE_B": "x", "EDGE_UPSTREAMS": "a:1 b:2"}) == (
        "listen 80;\nserver a:1;\nserver b:2;\nset $own x;\n"
    )


@pytest.mark.parametrize("value", ["web:8000; include /etc/passwd", "web:8000 }", "a\nb"])
def test_a_value_that_would_write_directives_of_its_own_is_refused(value: str) -> None:
    with pytest.raises(RenderError, match="may not hold"):
        site_render("server_name ${EDGE_SERVER_NAME};\n", {"EDGE_SERVER_NAME": value})


def test_the_render_script_says_what_is_missing_and_writes_nothing(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, NGINX / "render.py", NGINX / "easyharp.conf.template",
         tmp_path / "easyharp.conf"],
        env={"PATH": os.environ["PATH"], "EDGE_SERVER_NAME": "localhost"},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip

    assert result.returncode == 1
    assert "not set: EDGE_BODY_TIMEOUT, EDGE_CERTS," in result.stderr
    assert "EDGE_UPSTREAMS" in result.stderr
    assert not (tmp_path / "easyharp.conf").exists()


def test_the_images_start_script_renders_the_site_where_nginx_reads_it(tmp_path: Path) -> None:
    # The script as the Dockerfile lays it out, its folders pointed at this checkout.
    script = (NGINX / "render-site.sh").read_text()
    assert "/usr/local/lib/easyharp/" in script and "/etc/nginx/conf.d/" in script
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^COPY deploy/nginx/render-site.sh /docker-entrypoint.d/\S+\.sh$",
                     dockerfile, re.MULTILINE)  # fmt: skip
    assert re.search(r"^COPY deploy/nginx/easyharp.conf.template deploy/nginx/render.py "
                     r"/usr/local/lib/easyharp/$", dockerfile, re.MULTILINE)  # fmt: skip
    here = tmp_path / "render-site.sh"
    here.write_text(
        script.replace("/usr/local/lib/easyharp/", f"{NGINX}/").replace(
            "/etc/nginx/conf.d/", f"{tmp_path}/"
        )
    )
    values = edge_values(tmp_path, http_port=80, https_port=443, upstreams="web:8000")

    result = subprocess.run(
        ["sh", str(here)], env={"PATH": os.environ["PATH"], **values},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    site = (tmp_path / "easyharp.conf").read_text()
    assert "server web:8000;" in site and 'map "443" $https_port_suffix' in site
