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
import re
import signal
from contextlib import ExitStack
from dataclasses import dataclass

import httpx
import psycopg
import pytest
import websockets
from django.utils import timezone

from easyharp_site.lifespan import SHUTDOWN_WRITES_SECONDS
from games.models import DailyDeal
from games.services import attempt_start
from races.models import Racer
from tests.deploy.compose import services
from tests.fixtures import DEAL, DEAL_NUMBER, WIN_LOG
from tests.paths import ROOT
from tests.races.racing import race_for, running
from tests.replicas import (
    PASSING,
    Player,
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


def held_writes(dsn: str) -> int:
    """Writes of the servers waiting for a lock in the test database."""
    with psycopg.connect(dsn, autocommit=True) as db:
        row = db.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        ).fetchone()
    assert row is not None
    return int(row[0])


@dataclass(frozen=True)
class Streamed:
    """A socket that takes the win's actions: its `path`, the type of its first message
    (`opening`), the row its writes update (`table`, `row`), and what the stopping
    process's log says while it waits for the write held (`waiting`)."""

    path: str
    opening: str
    table: str
    row: int
    waiting: str


def test_a_stopped_process_stores_what_it_accepted_and_the_page_goes_on_at_the_other(
    transactional_db: None,
) -> None:
    DailyDeal.objects.create(date=timezone.now().date(), number=DEAL_NUMBER)
    roller = Player("roller")
    attempt, _ = attempt_start(player=roller.user, date=timezone.now().date())
    path = f"/ws/daily/{timezone.now().date().isoformat()}/attempt/"
    streamed = Streamed(path, "state", "games_attempt", attempt.pk, WAITING_FOR_WRITES)
    with ExitStack() as servers:
        first, second = (servers.enter_context(replica()) for _ in "ab")
        asyncio.run(_stream_through_a_restart(first, second.address, roller, streamed))
        answer = httpx.post(
            f"http://{second.address}/api/games/",
            json={"deal": DEAL, "log": " ".join(WIN_LOG)},
            headers={"Authorization": f"Token {roller.token}"},
            timeout=60,
        )
        assert answer.status_code == 201, answer.text
    attempt.refresh_from_db()
    assert attempt.ranked_game is not None
    assert attempt.ranked_game.log.split() == WIN_LOG


async def _stream_through_a_restart(
    first: Replica, second: str, player: Player, streamed: Streamed
) -> None:
    """Stream the win on `streamed` at `first`, stop `first` while the write of some
    actions waits for the lock on the game's row, then play on to the end at `second`."""
    dsn = database_url()
    socket = await open_socket(first.address, player.cookie, streamed.path)
    state = json.loads(await socket.recv())
    assert (state["type"], state["actions"]) == (streamed.opening, 0)
    await send_actions(socket, 1, FIRST_PART)
    await acknowledged_up_to(socket, FIRST_PART)

    held = FIRST_PART + HELD_PART
    with psycopg.connect(dsn) as lock:
        # The game's row locked: the next write waits, accepted and not acknowledged.
        lock.execute(f"SELECT id FROM {streamed.table} WHERE id = %s FOR UPDATE", [streamed.row])
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
        assert await asyncio.to_thread(first.said, streamed.waiting)
        assert first.process.poll() is None
        lock.rollback()
    await asyncio.to_thread(first.process.wait, 60)
    assert not any("unfinished" in line for line in first.lines)

    socket = await open_socket(second, player.cookie, streamed.path)
    state = json.loads(await socket.recv())
    assert state["type"] == streamed.opening
    assert state["log"].split() == WIN_LOG[:held]
    await play_on(socket, held + 1, len(WIN_LOG))
    await socket.close()


def test_a_race_goes_on_at_the_other_process_when_the_one_it_played_on_stops(
    transactional_db: None,
) -> None:
    host = Player("racer")
    race = running(race_for(host.user))
    seat = Racer.objects.get(race=race, player=host.user)
    # Its actions are written as an attempt's are, on the loop's own connections.
    path = f"/ws/races/{race.code}/"
    streamed = Streamed(path, "welcome", "races_racer", seat.pk, WAITING_FOR_WRITES)
    with ExitStack() as servers:
        first, second = (servers.enter_context(replica()) for _ in "ab")
        asyncio.run(_stream_through_a_restart(first, second.address, host, streamed))
    seat.refresh_from_db()
    assert seat.log.split() == WIN_LOG
    assert seat.won


def test_a_stop_of_a_web_replica_waits_out_the_writes_in_compose_and_in_systemd() -> None:
    unit = (ROOT / "deploy" / "systemd" / "easyharp-web.service").read_text()
    (systemd_grace,) = re.findall(r"^TimeoutStopSec=(\d+)$", unit, re.MULTILINE)
    compose_grace = str(services()["web"]["stop_grace_period"])

    assert compose_grace == f"{systemd_grace}s"
    # The writes' wait, and time for the requests under way besides.
    assert int(systemd_grace) >= 2 * SHUTDOWN_WRITES_SECONDS
