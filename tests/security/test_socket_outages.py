"""Sockets under pressure and with a store away, through the whole ASGI stack in-process.

- Each client address has its share of the process's sockets: past its connects
  a second, or its sockets open at once, a socket is closed with 4429 (others'
  addresses are not touched).
- With Redis away (the channel layer and the cache at a closed port) the ranked
  attempt's and a race's players still play: each action is stored and
  acknowledged; watching, which is live or nothing, is closed with 4503.
- With PostgreSQL away (the sockets' database calls at a closed port) every
  socket closes with 4503 `database_unavailable`, before or after its accept.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import OperationalError, connections
from django.test import override_settings
from django.utils import timezone

from easyharp_site.asgi import application
from easyharp_site.middleware import Receive, Scope, Send
from easyharp_site.sockets import CLOSE_TOO_MANY, CLOSE_UNAVAILABLE, SocketGuard
from games.models import Attempt, DailyDeal
from games.services import attempt_start
from races.models import Racer
from tests.fixtures import WIN_LOG, play_ranked
from tests.races.racing import race_for, running, session_cookie
from tests.servers import free_port

pytestmark = pytest.mark.django_db(transaction=True)

OPENING = WIN_LOG[:4]
# Redis at a port nobody listens on.
REDIS_AWAY = "redis://127.0.0.1:1/0"


@pytest.fixture(autouse=True)
async def _close_database_thread_connections() -> AsyncIterator[None]:
    yield
    await database_sync_to_async(connections.close_all)()


def from_address(address: str) -> Any:
    """The site's application, as a server hands it a socket from `address`."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await application({**scope, "client": [address, 50_000]}, receive, send)

    return app


async def opened(
    path: str, *, player: AbstractBaseUser | None = None, address: str = "198.51.100.1"
) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
    if player is not None:
        headers.append(await database_sync_to_async(session_cookie)(player))
    communicator = WebsocketCommunicator(from_address(address), path, headers=headers)
    connected, _ = await communicator.connect(timeout=10)
    assert connected
    return communicator


async def first(communicator: WebsocketCommunicator) -> dict[str, Any]:
    message: dict[str, Any] = await communicator.receive_json_from(timeout=10)
    return message


async def closed_with(communicator: WebsocketCommunicator) -> tuple[str, int]:
    """The error code a refused socket gets, and its close code."""
    error = await first(communicator)
    assert error["type"] == "error", error
    closing = await communicator.receive_output(timeout=10)
    assert closing["type"] == "websocket.close", closing
    await communicator.disconnect()
    return error["error"]["code"], closing["code"]


def board_path(daily: DailyDeal) -> str:
    return f"/ws/daily/{daily.date.isoformat()}/leaderboard/?order=score"


def attempt_path() -> str:
    return f"/ws/daily/{timezone.now().date().isoformat()}/attempt/"


def watch_path(player: AbstractBaseUser) -> str:
    return f"/ws/daily/{timezone.now().date().isoformat()}/players/{player.get_username()}/attempt/"


def started(player: AbstractBaseUser) -> Attempt:
    attempt, _ = attempt_start(player=player, date=timezone.now().date())
    return attempt


async def stream(communicator: WebsocketCommunicator, tokens: list[str]) -> None:
    """Send each action once the one before is acknowledged (other messages pass)."""
    for number, token in enumerate(tokens, start=1):
        await communicator.send_json_to({"type": "action", "n": number, "action": token})
        while (answer := await first(communicator))["type"] != "ack":
            assert answer["type"] in {"race", "watchers"}, answer
        assert answer["n"] == number, answer


# --- Each address's share ---------------------------------------------------------------


@override_settings(SOCKET_CONNECT_BURST=3, SOCKET_CONNECTS_PER_SECOND=0.001)
async def test_an_address_past_its_connects_a_second_is_closed_with_4429_others_are_not(
    daily: DailyDeal,
) -> None:
    held = [await opened(board_path(daily), address="203.0.113.1") for _ in range(3)]
    for socket in held:
        assert (await first(socket))["type"] == "snapshot"

    refused = await opened(board_path(daily), address="203.0.113.1")
    other = await opened(board_path(daily), address="203.0.113.2")

    assert await closed_with(refused) == ("too_many_connects", CLOSE_TOO_MANY)
    assert (await first(other))["type"] == "snapshot"
    for socket in [*held, other]:
        await socket.disconnect()


@override_settings(SOCKETS_PER_ADDRESS=2)
async def test_an_address_holding_its_sockets_is_closed_with_4429_until_one_closes(
    daily: DailyDeal,
) -> None:
    held = [await opened(board_path(daily), address="203.0.113.3") for _ in range(2)]
    for socket in held:
        assert (await first(socket))["type"] == "snapshot"

    refused = await opened(board_path(daily), address="203.0.113.3")
    assert await closed_with(refused) == ("too_many_sockets", CLOSE_TOO_MANY)

    await held.pop().disconnect()
    again = await opened(board_path(daily), address="203.0.113.3")
    assert (await first(again))["type"] == "snapshot"
    for socket in [*held, again]:
        await socket.disconnect()


# --- Redis away -------------------------------------------------------------------------


@pytest.fixture
def redis_away() -> Iterator[None]:
    layers = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [REDIS_AWAY]},
        }
    }
    caches = {
        "default": {"BACKEND": "easyharp_site.compat.SharedPoolRedisCache", "LOCATION": REDIS_AWAY}
    }
    with override_settings(CHANNEL_LAYERS=layers, CACHES=caches):
        yield


async def test_with_redis_away_the_attempt_still_plays_and_stores_each_action(
    redis_away: None, daily: DailyDeal, alice: AbstractBaseUser, caplog: pytest.LogCaptureFixture
) -> None:
    await database_sync_to_async(started)(alice)
    socket = await opened(attempt_path(), player=alice)

    state = await first(socket)
    assert state["type"] == "state" and state["watchers"] == 0
    await stream(socket, OPENING)
    await socket.disconnect()

    stored = await database_sync_to_async(Attempt.objects.get)(player=alice)
    assert stored.log.split() == OPENING
    assert any("channel layer is away" in record.getMessage() for record in caplog.records)


async def test_with_redis_away_watching_an_attempt_is_closed_with_4503(
    redis_away: None, daily: DailyDeal, alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    await database_sync_to_async(started)(alice)
    await database_sync_to_async(play_ranked)(bob, "S")

    watcher = await opened(watch_path(alice), player=bob)

    assert await closed_with(watcher) == ("live_unavailable", CLOSE_UNAVAILABLE)


async def test_with_redis_away_a_race_still_plays_and_a_watcher_is_closed_with_4503(
    redis_away: None,
    alice: AbstractBaseUser,
    bob: AbstractBaseUser,
    make_player: Any,
) -> None:
    race = await database_sync_to_async(lambda: running(race_for(alice, bob)))()
    carol = await database_sync_to_async(make_player)("carol")
    player = await opened(f"/ws/races/{race.code}/", player=alice)
    welcome = await first(player)
    assert welcome["type"] == "welcome" and welcome["race"]["status"] == "running"

    await stream(player, OPENING)
    await player.send_json_to({"type": "ping"})
    answered = await first(player)
    watcher = await opened(f"/ws/races/{race.code}/", player=carol)

    assert answered["type"] == "race"
    assert [p["moves"] > 0 for p in answered["race"]["players"]] == [True, False]
    assert await closed_with(watcher) == ("live_unavailable", CLOSE_UNAVAILABLE)
    await player.disconnect()
    stored = await database_sync_to_async(Racer.objects.get)(race=race, player=alice)
    assert stored.log.split() == OPENING


# --- PostgreSQL away --------------------------------------------------------------------


@asynccontextmanager
async def database_away() -> AsyncIterator[None]:
    """The sockets' database calls go to a port nobody listens on (the test's own
    connection stays as it is), until the test ends."""
    settings_dict = connections.settings["default"]
    saved = settings_dict["HOST"], settings_dict["PORT"]
    settings_dict["HOST"], settings_dict["PORT"] = "127.0.0.1", str(free_port())
    await database_sync_to_async(connections.close_all)()
    try:
        yield
    finally:
        settings_dict["HOST"], settings_dict["PORT"] = saved
        await database_sync_to_async(connections.close_all)()
        # The next socket would find the database back; the next test starts as new.
        guard = application.application_mapping["websocket"].app
        assert isinstance(guard, SocketGuard)
        guard.database_away, guard.probing_since = False, None


def socket_paths(daily: DailyDeal, alice: AbstractBaseUser, code: str) -> dict[str, str]:
    return {
        "board": board_path(daily),
        "attempt": attempt_path(),
        "watch": watch_path(alice),
        "race": f"/ws/races/{code}/",
        "league board": f"/ws/leagues/none/daily/{daily.date.isoformat()}/leaderboard/",
    }


@pytest.mark.postgres
# Signed in, the session's read fails before the socket is accepted; anonymous (where
# the socket serves anyone), its first read after.
@pytest.mark.parametrize(
    ("kind", "signed_in"),
    [
        *[(kind, True) for kind in ("board", "attempt", "watch", "race", "league board")],
        *[(kind, False) for kind in ("board", "race", "league board")],
    ],
)
async def test_with_postgresql_away_every_socket_is_closed_with_4503(
    daily: DailyDeal,
    alice: AbstractBaseUser,
    bob: AbstractBaseUser,
    kind: str,
    signed_in: bool,
    caplog: pytest.LogCaptureFixture,
) -> None:
    race = await database_sync_to_async(race_for)(alice, bob)
    await database_sync_to_async(started)(alice)
    path = socket_paths(daily, alice, race.code)[kind]
    cookie = await database_sync_to_async(session_cookie)(bob) if signed_in else None

    async with database_away():
        headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
        if cookie is not None:
            headers.append(cookie)
        socket = WebsocketCommunicator(application, path, headers=headers)
        connected, _ = await socket.connect(timeout=10)
        assert connected
        code, close = await closed_with(socket)

    assert (code, close) == ("database_unavailable", CLOSE_UNAVAILABLE)
    assert any("database is away" in record.getMessage() for record in caplog.records)


class Database:
    """A socket application whose database is away (its sockets fail), or slow to
    answer (each socket waits for `answer`), or back (each socket is served)."""

    def __init__(self) -> None:
        self.state = "away"
        self.answer = asyncio.Event()
        self.calls = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.calls += 1
        assert (await receive())["type"] == "websocket.connect"
        if self.state == "away":
            raise OperationalError("connection refused")
        await self.answer.wait()
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send", "text": '{"type": "snapshot"}'})
        await receive()


async def test_once_the_database_failed_one_socket_finds_out_and_the_others_close_at_once() -> None:
    database = Database()
    guard = SocketGuard(database)

    async def socket() -> WebsocketCommunicator:
        communicator = WebsocketCommunicator(guard, "/ws/x/")
        connected, _ = await communicator.connect(timeout=10)
        assert connected
        return communicator

    failed = await closed_with(await socket())
    database.state = "slow"
    finding_out = WebsocketCommunicator(guard, "/ws/x/")
    waiting = asyncio.ensure_future(finding_out.connect(timeout=10))
    while database.calls < 2:  # the second socket waits on the database
        await asyncio.sleep(0)
    meanwhile = await closed_with(await socket())
    database.answer.set()
    assert (await waiting)[0]
    served = await first(finding_out)
    after = await socket()
    served_after = await first(after)

    assert failed == ("database_unavailable", CLOSE_UNAVAILABLE)
    assert meanwhile == ("database_unavailable", CLOSE_UNAVAILABLE)
    # The socket closed meanwhile never reached the application.
    assert database.calls == 3
    assert served["type"] == served_after["type"] == "snapshot"
    for communicator in (finding_out, after):
        await communicator.disconnect()
