"""A rolling restart nobody notices: two real server processes on one PostgreSQL and
Redis, a ranked attempt (or a race) streamed on the first, the first told to stop
(SIGTERM) in the middle of it.

The stopping process closes the socket with 1012 ("service restart"), stores
the actions it had accepted before it exits (here one write held back by a row
lock until after the close, so that it is still under way when the process is
told to stop), and the page connects to the other process, sends what it has
not seen stored and submits its game there.
"""

from __future__ import annotations

import asyncio
import json
import signal
from contextlib import ExitStack
from typing import Any

import httpx
import psycopg
import pytest
import websockets
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token

from games.models import Attempt, DailyDeal
from games.services import attempt_start
from races.models import Racer
from tests.fixtures import DEAL, DEAL_NUMBER, PASSWORD, WIN_LOG
from tests.races.racing import race_for, running
from tests.replicas import (
    PASSING,
    Replica,
    acknowledged_up_to,
    database_url,
    open_socket,
    play_on,
    replica,
    send_actions,
)

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

# What the lifespan of a stopping process says while a write of a closed socket goes on.
WAITING_FOR_WRITES = "Stopping once the writes of streamed actions under way end: 1"

# Actions acknowledged on the first process, then actions sent to it while their write waits.
FIRST_PART = 30
HELD_PART = 5


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
    """Writes of the servers waiting for a lock in the test database."""
    with psycopg.connect(dsn, autocommit=True) as db:
        row = db.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        ).fetchone()
    assert row is not None
    return int(row[0])


def attempt_path() -> str:
    return f"/ws/daily/{timezone.now().date().isoformat()}/attempt/"


def test_a_stopped_process_stores_what_it_accepted_and_the_page_goes_on_at_the_other(
    player: tuple[Any, str, str],
) -> None:
    user, cookie, token = player
    attempt = Attempt.objects.get(player=user)
    with ExitStack() as servers:
        first, second = (servers.enter_context(replica()) for _ in "ab")
        asyncio.run(
            _stream_through_a_restart(
                first,
                second.address,
                cookie,
                attempt_path(),
                "state",
                "games_attempt",
                attempt.pk,
                WAITING_FOR_WRITES,
            )
        )
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
    first: Replica,
    second: str,
    cookie: str,
    path: str,
    opening: str,
    table: str,
    row: int,
    waiting: str,
) -> None:
    """Stream the win on `path` at `first` (whose first message is of type `opening`),
    stop `first` while the write of some actions waits for the lock on `row` of
    `table` (till its log says `waiting`), then play on to the end at `second`."""
    dsn = database_url()
    socket = await open_socket(first.address, cookie, path)
    state = json.loads(await socket.recv())
    assert (state["type"], state["actions"]) == (opening, 0)
    await send_actions(socket, 1, FIRST_PART)
    await acknowledged_up_to(socket, FIRST_PART)

    held = FIRST_PART + HELD_PART
    with psycopg.connect(dsn) as lock:
        # The game's row locked: the next write waits, accepted and not acknowledged.
        lock.execute(f"SELECT id FROM {table} WHERE id = %s FOR UPDATE", [row])
        await send_actions(socket, FIRST_PART + 1, held)
        while held_writes(dsn) == 0:
            assert first.process.poll() is None
            await asyncio.sleep(0.05)
        first.process.send_signal(signal.SIGTERM)
        with pytest.raises(websockets.ConnectionClosed) as closed:
            while True:
                message = json.loads(await asyncio.wait_for(socket.recv(), timeout=60))
                assert message["type"] in PASSING, message  # no ack while the row is held
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1012
        # The process waits for the write it accepted before it stops.
        assert await asyncio.to_thread(first.said, waiting)
        assert first.process.poll() is None
        lock.rollback()
    await asyncio.to_thread(first.process.wait, 60)
    assert not any("unfinished" in line for line in first.lines)

    socket = await open_socket(second, cookie, path)
    state = json.loads(await socket.recv())
    assert state["type"] == opening
    assert state["log"].split() == WIN_LOG[:held]
    await play_on(socket, held + 1, len(WIN_LOG))
    await socket.close()


def test_a_race_goes_on_at_the_other_process_when_the_one_it_played_on_stops(
    transactional_db: None,
) -> None:
    host = get_user_model().objects.create_user(username="racer", password=PASSWORD)
    client = Client()
    assert client.login(username="racer", password=PASSWORD)
    race = running(race_for(host))
    seat = Racer.objects.get(race=race, player=host)
    with ExitStack() as servers:
        first, second = (servers.enter_context(replica()) for _ in "ab")
        asyncio.run(
            _stream_through_a_restart(
                first,
                second.address,
                client.cookies[settings.SESSION_COOKIE_NAME].value,
                f"/ws/races/{race.code}/",
                "welcome",
                "races_racer",
                seat.pk,
                # A race's socket ends (leaves its watchers) in the thread the held
                # write holds: the server waits for the socket, then for the write.
                "Waiting for background tasks to complete",
            )
        )
    seat.refresh_from_db()
    assert seat.log.split() == WIN_LOG
    assert seat.won
