"""Several real server processes on the suite's PostgreSQL test database and Redis, as
replicas behind a load balancer are: `replica()` starts one (uvicorn with the
production flags, the test's committed rows visible to it), `Replica.said`
waits for a line of its log; `open_socket`, `send_actions` and `play_on` speak
to its sockets as a page does, for a `Player` signed in by a session cookie.

Tests using them need the `transactional_db` fixture (the rows they make must
be committed for the servers to see them) and the `postgres` and `redis` marks.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import websockets
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from rest_framework.authtoken.models import Token

from tests.fixtures import PASSWORD, WIN_LOG
from tests.servers import ROOT, UVICORN, free_port, server_flags, wait_for_port


def database_url() -> str:
    """The test database's address, for the server processes."""
    url = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(url._replace(path=f"/{connection.settings_dict['NAME']}"))


class Replica:
    """A running server process: its address and the lines of its log so far."""

    def __init__(self, address: str, process: subprocess.Popen[bytes]) -> None:
        self.address, self.process = address, process
        self.lines: list[str] = []
        self.ended = False
        self.heard = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            with self.heard:
                self.lines.append(line.decode(errors="replace"))
                self.heard.notify_all()
        with self.heard:
            self.ended = True
            self.heard.notify_all()

    def said(self, text: str) -> bool:
        """Wait for a line of its log holding `text` (False if it ends without one)."""
        with self.heard:
            return self.heard.wait_for(
                lambda: any(text in line for line in self.lines) or self.ended,
                timeout=120,
            ) and any(text in line for line in self.lines)


@contextmanager
def replica(*server_args: str, **overrides: str) -> Iterator[Replica]:
    """A server process with the production flags on the test database and Redis, its
        settings changed by `overrides` (environment variables), and `server_args` after
    the production flags."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "DJANGO_SETTINGS_MODULE": "tests.replica_settings",
        # The replicas of this test session hear one another alone.
        "REPLICA_CHANNEL_PREFIX": f"asgi-replicas-{os.getpid()}",
        # The held write waits for the test's lock, well past the default 5 s if the
        # machine is slow; a statement that times out would fail the write.
        "LOOP_POOL_STATEMENT_TIMEOUT_MS": "120000",
        # The lifespan says when it waits for writes (read by `said`).
        "LOG_LEVEL": "INFO",
        **overrides,
    }
    port = free_port()
    process = subprocess.Popen(
        [str(UVICORN), "easyharp_site.asgi:application", *server_flags(port, server_args)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, process)
        yield Replica(f"127.0.0.1:{port}", process)
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=30)


async def open_socket(address: str, cookie: str, path: str, tls: Any = None) -> Any:
    """The socket at `path` of the server at `address`, as its page opens it, signed in
    with the session `cookie`; over TLS with the `ssl.SSLContext` `tls`."""
    scheme = "https" if tls else "http"
    return await websockets.connect(
        f"{scheme.replace('http', 'ws')}://{address}{path}",
        origin=f"{scheme}://{address}",  # type: ignore[arg-type]
        additional_headers={"Cookie": f"{settings.SESSION_COOKIE_NAME}={cookie}"},
        ssl=tls,
    )


async def send_actions(socket: Any, first: int, last: int) -> None:
    for n in range(first, last + 1):
        await socket.send(json.dumps({"type": "action", "n": n, "action": WIN_LOG[n - 1]}))


# Messages a socket may send between its acknowledgements: the attempt's count of
# watchers, a race's state.
PASSING = {"watchers", "race"}


async def acknowledged_up_to(socket: Any, n: int) -> None:
    """Read until the acknowledgement of action `n`."""
    while True:
        message = json.loads(await asyncio.wait_for(socket.recv(), timeout=60))
        assert message["type"] == "ack" or message["type"] in PASSING, message
        if message["type"] == "ack" and message["n"] >= n:
            return


async def play_on(socket: Any, first: int, last: int) -> None:
    """Send actions `first` to `last`, each once the one before is stored, again after
    the wait a race asks for when they come faster than a person plays (`too_fast`)."""
    n = first
    while n <= last:
        await send_actions(socket, n, n)
        message = json.loads(await asyncio.wait_for(socket.recv(), timeout=60))
        while message["type"] in PASSING:
            message = json.loads(await asyncio.wait_for(socket.recv(), timeout=60))
        if message["type"] == "refused" and message["error"]["code"] == "too_fast":
            await asyncio.sleep(message["error"]["retry_after_ms"] / 1000)
            continue
        assert (message["type"], message["n"]) == ("ack", n), message
        n += 1


class Player:
    """A player of the test: their account, a session cookie and an API token."""

    def __init__(self, username: str) -> None:
        self.user = get_user_model().objects.create_user(username=username, password=PASSWORD)
        client = Client()
        assert client.login(username=username, password=PASSWORD)
        self.cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
        self.token = Token.objects.create(user=self.user).key
