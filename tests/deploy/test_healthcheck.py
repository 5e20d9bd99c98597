"""deploy/healthcheck.py, the web service's health check, run as the container runs it."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.servers import ROOT, free_port, server_env


class Health(BaseHTTPRequestHandler):
    """A server that answers /healthz/ with 200 and notes the Host it was asked for."""

    asked: list[tuple[str, str]] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        Health.asked.append((self.path, self.headers["Host"]))
        self.send_response(200 if self.path == "/healthz/" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[int]:
    Health.asked = []
    running = ThreadingHTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=running.serve_forever, daemon=True).start()
    try:
        yield running.server_port
    finally:
        running.shutdown()
        running.server_close()


def check(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "deploy" / "healthcheck.py")],
        cwd=tmp_path,
        env={**server_env(tmp_path / "db.sqlite3", PYTHONPATH=str(ROOT)), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_it_asks_the_server_on_the_port_the_settings_name(tmp_path: Path, server: int) -> None:
    result = check(tmp_path, WEB_PORT=str(server), ALLOWED_HOSTS="play.example.org,localhost")

    assert result.returncode == 0, result.stderr
    assert Health.asked == [("/healthz/", "play.example.org")]


def test_a_server_listening_on_every_address_is_asked_on_loopback(
    tmp_path: Path, server: int
) -> None:
    result = check(tmp_path, WEB_HOST="0.0.0.0", WEB_PORT=str(server))  # noqa: S104

    assert result.returncode == 0, result.stderr
    assert Health.asked == [("/healthz/", "localhost")]


def test_it_fails_when_nothing_answers_where_the_settings_say(tmp_path: Path, server: int) -> None:
    nobody = free_port()
    result = check(tmp_path, WEB_PORT=str(nobody))

    assert result.returncode == 1
    assert f"127.0.0.1:{nobody}" in result.stderr
    assert Health.asked == []


def test_it_fails_with_the_reason_when_the_settings_are_wrong(tmp_path: Path) -> None:
    result = check(tmp_path, WEB_PORT="eight thousand")

    assert result.returncode == 1
    assert "WEB_PORT must be a whole number" in result.stderr
