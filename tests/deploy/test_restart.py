"""A rolling restart nobody notices: two real server processes on one PostgreSQL and
Redis, a ranked attempt streamed on the first, the first told to stop (SIGTERM) in
the middle of it.

The stopping process closes the socket with 1012 ("service restart"), stores
the actions it had accepted before it exits (here one write held back by a row
lock until after the close, so that it is still under way when the process is
told to stop), and the page connects to the other process, sends what it has
not seen stored and submits its game there.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import pytest
import websockets
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token

from games.models import Attempt, DailyDeal
from games.services import attempt_start
from tests.fixtures import DEAL, DEAL_NUMBER, PASSWORD, WIN_LOG
from tests.servers import ROOT, UVICORN, free_port, server_flags, wait_for_port

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

# Actions acknowledged on the first process, then actions sent to it while their write waits.
FIRST_PART = 30
HELD_PART = 5


def database_url() -> str:
    """The test database's address, for the server processes."""
    url = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(url._replace(path=f"/{connection.settings_dict['NAME']}"))


class Server:
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
def server() -> Iterator[Server]:
    """A server process with the production flags on the test database and Redis."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "DJANGO_SETTINGS_MODULE": "easyharp_site.settings",
        # The held write waits for the test's lock, well past the default 5 s if the
        # machine is slow; a statement that times out would fail the write.
        "LOOP_POOL_STATEMENT_TIMEOUT_MS": "120000",
        # The lifespan says when it waits for writes (read by `said`).
        "LOG_LEVEL": "INFO",
    }
    port = free_port()
    process = subprocess.Popen(
        [str(UVICORN), "easyharp_site.asgi:application", *server_flags(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, process)
        yield Server(f"127.0.0.1:{port}", process)
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def player(transactional_db: None) -> tuple[Any, str, str]:
    """A player with today's attempt open: the player, a session cookie and a token."""
    DailyDeal.objects.create(date=timezone.now().date(), number=DEAL_NUMBER)
    player = get_user_model().objects.create_user(username="roller", password=PASSWORD)
    client = Client()
    assert client.login(username="roller", password=PASSWORD)
    attempt_start(player=player, date=timezone.now().date())
    token, _ = Token.objects.get_or_create(user=player)
    return player, client.cookies[settings.SESSION_COOKIE_NAME].value, token.key


def held_writes(dsn: str) -> int:
    """Writes of the servers' loops waiting for a lock in the test database."""
    with psycopg.connect(dsn, autocommit=True) as db:
        row = db.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name = 'easyharp loop' AND wait_event_type = 'Lock'"
        ).fetchone()
    assert row is not None
    return int(row[0])


async def open_socket(address: str, cookie: str) -> Any:
    date = timezone.now().date().isoformat()
    return await websockets.connect(
        f"ws://{address}/ws/daily/{date}/attempt/",
        origin=f"http://{address}",  # type: ignore[arg-type]
        additional_headers={"Cookie": f"{settings.SESSION_COOKIE_NAME}={cookie}"},
    )


async def send_actions(socket: Any, first: int, last: int) -> None:
    for n in range(first, last + 1):
        await socket.send(json.dumps({"type": "action", "n": n, "action": WIN_LOG[n - 1]}))


async def acknowledged_up_to(socket: Any, n: int) -> list[dict[str, Any]]:
    """Every message until the acknowledgement of action `n`."""
    heard = []
    while True:
        message = json.loads(await asyncio.wait_for(socket.recv(), timeout=60))
        heard.append(message)
        assert message["type"] in {"ack", "watchers"}, message
        if message["type"] == "ack" and message["n"] >= n:
            return heard


def test_a_stopped_process_stores_what_it_accepted_and_the_page_goes_on_at_the_other(
    player: tuple[Any, str, str],
) -> None:
    user, cookie, token = player
    attempt = Attempt.objects.get(player=user)
    dsn = database_url()
    with ExitStack() as servers:
        first, second = (servers.enter_context(server()) for _ in "ab")
        asyncio.run(_stream_through_a_restart(first, second.address, cookie, dsn, attempt))
        answer = httpx.post(
            f"http://{second.address}/api/games/",
            json={"deal": DEAL, "log": " ".join(WIN_LOG)},
            headers={"Authorization": f"Token {token}"},
            timeout=60,
        )
        assert answer.status_code == 201, answer.text
    attempt.refresh_from_db()
    assert attempt.ranked_game is not None
    assert attempt.ranked_game.log.split() == WIN_LOG


async def _stream_through_a_restart(
    first: Server,
    second: str,
    cookie: str,
    dsn: str,
    attempt: Attempt,
) -> None:
    socket = await open_socket(first.address, cookie)
    state = json.loads(await socket.recv())
    assert (state["type"], state["actions"]) == ("state", 0)
    await send_actions(socket, 1, FIRST_PART)
    await acknowledged_up_to(socket, FIRST_PART)

    held = FIRST_PART + HELD_PART
    with psycopg.connect(dsn) as lock:
        # The attempt's row locked: the next write waits, accepted and not acknowledged.
        lock.execute("SELECT id FROM games_attempt WHERE id = %s FOR UPDATE", [attempt.pk])
        await send_actions(socket, FIRST_PART + 1, held)
        while held_writes(dsn) == 0:
            assert first.process.poll() is None
            await asyncio.sleep(0.05)
        first.process.send_signal(signal.SIGTERM)
        with pytest.raises(websockets.ConnectionClosed) as closed:
            while True:
                message = json.loads(await asyncio.wait_for(socket.recv(), timeout=60))
                assert message["type"] == "watchers", message  # no ack while the row is held
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1012
        # The process waits for the write it accepted before it stops.
        assert await asyncio.to_thread(
            first.said, "Stopping once the writes of streamed actions under way end: 1"
        )
        assert first.process.poll() is None
        lock.rollback()
    await asyncio.to_thread(first.process.wait, 60)
    assert not any("unfinished" in line for line in first.lines)

    socket = await open_socket(second, cookie)
    state = json.loads(await socket.recv())
    assert state["type"] == "state"
    assert state["log"].split() == WIN_LOG[:held]
    await send_actions(socket, held + 1, len(WIN_LOG))
    await acknowledged_up_to(socket, len(WIN_LOG))
    await socket.close()
