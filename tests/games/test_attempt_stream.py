"""ws/daily/{date}/attempt/: the ranked attempt streamed action by action, timed by the server.

Through the whole ASGI stack with `WebsocketCommunicator`, signed in by the
session cookie, against the real services and database.
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import connections
from django.test import Client
from django.utils import timezone

from easyharp_site.asgi import application
from games.consumers import (
    CLOSE_ATTEMPT_OVER,
    CLOSE_FLOOD,
    CLOSE_NO_ATTEMPT,
    CLOSE_NOT_SIGNED_IN,
    CLOSE_SAVE_FAILED,
)
from games.models import Attempt, DailyDeal, Game
from games.services import attempt_save, attempt_start
from ranking.actions import game_submit
from tests.fixtures import DEAL, WIN_LOG, client_for, rewind

pytestmark = pytest.mark.django_db(transaction=True)

# The first actions of the conformance vectors' win of today's deal.
OPENING = WIN_LOG[:6]


@pytest.fixture(autouse=True)
async def _close_database_thread_connections() -> AsyncIterator[None]:
    """The socket's reads and writes run in Channels' database thread: close its
    connection after each test, so that the test database can be dropped."""
    yield
    await database_sync_to_async(connections.close_all)()


def session_cookie(player: AbstractBaseUser) -> tuple[bytes, bytes]:
    client = Client()
    client.force_login(player)
    return (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())


async def open_socket(
    player: AbstractBaseUser | None, date: datetime.date | str | None = None
) -> WebsocketCommunicator:
    """A connected attempt socket (not past its first message)."""
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
    if player is not None:
        headers.append(await database_sync_to_async(session_cookie)(player))
    day = date or timezone.now().date()
    text = day.isoformat() if isinstance(day, datetime.date) else day
    communicator = WebsocketCommunicator(application, f"/ws/daily/{text}/attempt/", headers=headers)
    connected, _ = await communicator.connect()
    assert connected
    return communicator


async def stream_open(player: AbstractBaseUser) -> tuple[WebsocketCommunicator, dict[str, Any]]:
    """An open attempt socket and its `state`."""
    communicator = await open_socket(player)
    state = await communicator.receive_json_from(timeout=5)
    assert state["type"] == "state", state
    return communicator, state


async def send_action(communicator: WebsocketCommunicator, number: int, token: str) -> None:
    await communicator.send_json_to({"type": "action", "n": number, "action": token})


async def answer(communicator: WebsocketCommunicator) -> dict[str, Any]:
    message: dict[str, Any] = await communicator.receive_json_from(timeout=5)
    return message


async def stream(communicator: WebsocketCommunicator, tokens: list[str], first: int = 1) -> int:
    """Send `tokens` as actions `first`..., each once the one before is acknowledged."""
    version = 0
    for number, token in enumerate(tokens, start=first):
        await send_action(communicator, number, token)
        ack = await answer(communicator)
        assert ack["type"] == "ack" and ack["n"] == number, ack
        version = ack["version"]
    return version


async def closed_with(communicator: WebsocketCommunicator) -> tuple[dict[str, Any], int]:
    """The error a refused socket gets, and its close code."""
    error = await answer(communicator)
    assert error["type"] == "error", error
    closing = await communicator.receive_output(timeout=5)
    assert closing["type"] == "websocket.close", closing
    return error["error"], closing["code"]


def started(player: AbstractBaseUser) -> Attempt:
    attempt, _ = attempt_start(player=player, date=timezone.now().date())
    return attempt


def stored(player: AbstractBaseUser) -> Attempt:
    return Attempt.objects.get(player=player)


# --- Accepting -------------------------------------------------------------------


async def test_each_action_is_stored_with_the_servers_receive_time_then_acknowledged(
    alice: AbstractBaseUser, daily: DailyDeal
) -> None:
    attempt = await database_sync_to_async(started)(alice)
    communicator, state = await stream_open(alice)
    assert (state["log"], state["actions"], state["version"], state["deal"]) == ("", 0, 0, DEAL)

    before = timezone.now()
    version = await stream(communicator, OPENING)
    after = timezone.now()

    saved = await database_sync_to_async(stored)(alice)
    assert saved.log.split() == OPENING
    assert version == saved.version == len(OPENING)
    assert len(saved.times) == len(OPENING)
    assert saved.times == sorted(saved.times)
    low = (before - attempt.started_at).total_seconds() * 1000 - 1
    high = (after - attempt.started_at).total_seconds() * 1000 + 1
    assert all(low <= time <= high for time in saved.times), (saved.times, low, high)
    await communicator.receive_nothing()
    await communicator.disconnect()


async def test_a_socket_connecting_again_goes_on_from_the_stored_game(
    alice: AbstractBaseUser, daily: DailyDeal
) -> None:
    await database_sync_to_async(started)(alice)
    first, _ = await stream_open(alice)
    await stream(first, OPENING[:3])
    await first.disconnect()

    again, state = await stream_open(alice)
    assert (state["log"].split(), state["actions"]) == (OPENING[:3], 3)
    await stream(again, OPENING[3:], first=4)
    await again.disconnect()

    assert (await database_sync_to_async(stored)(alice)).log.split() == OPENING


# --- Refusing --------------------------------------------------------------------


async def test_an_illegal_action_is_refused_at_once_with_the_engines_reason_as_the_api_says_it(
    alice: AbstractBaseUser, daily: DailyDeal
) -> None:
    await database_sync_to_async(started)(alice)
    communicator, _ = await stream_open(alice)
    await stream(communicator, ["S", "S"])

    await send_action(communicator, 3, "12")
    refused = await answer(communicator)

    api = await database_sync_to_async(
        lambda: (
            client_for(alice)
            .post("/api/games/", {"deal": DEAL, "log": "S S 12"}, format="json")
            .json()
        )
    )()
    assert refused["type"] == "refused" and refused["n"] == 3
    assert refused["error"] == {**api["error"], "message": refused["error"]["message"]}
    assert refused["error"]["code"] == "illegal_action"
    assert (refused["error"]["index"], refused["error"]["token"]) == (3, "12")
    assert (await database_sync_to_async(stored)(alice)).log == "S S"
    # The socket goes on: the next action is still number 3.
    await stream(communicator, ["S"], first=3)
    await communicator.disconnect()


async def test_unreadable_text_is_refused_like_the_api_refuses_it(
    alice: AbstractBaseUser, daily: DailyDeal
) -> None:
    await database_sync_to_async(started)(alice)
    communicator, _ = await stream_open(alice)

    await send_action(communicator, 1, "Q9")
    refused = await answer(communicator)

    assert refused["error"]["code"] == "illegal_action"
    assert (refused["error"]["reason_code"], refused["error"]["index"]) == (
        "unreadable_action",
        1,
    )
    await communicator.disconnect()


async def test_an_action_sent_again_is_acknowledged_again_and_stored_once(
    alice: AbstractBaseUser, daily: DailyDeal
) -> None:
    await database_sync_to_async(started)(alice)
    communicator, _ = await stream_open(alice)
    await stream(communicator, OPENING[:2])

    await send_action(communicator, 1, OPENING[0].lower())
    again = await answer(communicator)

    assert again == {"type": "ack", "n": 1, "version": 2}
    assert (await database_sync_to_async(stored)(alice)).log.split() == OPENING[:2]
    await communicator.disconnect()


async def test_another_action_at_a_stored_number_is_refused_as_a_conflict(
    alice: AbstractBaseUser, daily: DailyDeal
) -> None:
    await database_sync_to_async(started)(alice)
    communicator, _ = await stream_open(alice)
    await stream(communicator, ["S", "41"])

    await send_action(communicator, 2, "S")
    refused = await answer(communicator)

    assert refused["type"] == "refused" and refused["n"] == 2
    assert refused["error"]["code"] == "action_conflict"
    assert (refused["error"]["stored"], refused["error"]["actions"]) == ("41", 2)
    assert (await database_sync_to_async(stored)(alice)).log == "S 41"
    await communicator.disconnect()


async def test_an_action_after_a_gap_is_refused_with_the_number_expected(
    alice: AbstractBaseUser, daily: DailyDeal
) -> None:
    await database_sync_to_async(started)(alice)
    communicator, _ = await stream_open(alice)
    await stream(communicator, ["S"])

    await send_action(communicator, 3, "S")
    refused = await answer(communicator)

    assert refused["error"]["code"] == "out_of_order"
    assert refused["error"]["next"] == 2
    assert (await database_sync_to_async(stored)(alice)).log == "S"
    await communicator.disconnect()


@pytest.mark.parametrize(
    "message",
    [
        {"type": "action", "n": 0, "action": "S"},
        {"type": "action", "n": "1", "action": "S"},
        {"type": "action", "n": True, "action": "S"},
        {"type": "action", "n": 1, "action": ["S"]},
        {"type": "move"},
        [],
    ],
)
async def test_a_message_not_understood_gets_an_error_and_the_socket_stays(
    alice: AbstractBaseUser, daily: DailyDeal, message: Any
) -> None:
    await database_sync_to_async(started)(alice)
    communicator, _ = await stream_open(alice)

    await communicator.send_json_to(message)
    error = await answer(communicator)

    assert error["type"] == "error" and error["error"]["code"] == "unknown_message"
    await communicator.send_json_to({"type": "ping"})
    assert await answer(communicator) == {"type": "pong"}
    await communicator.disconnect()


async def test_a_message_too_large_is_refused(
    alice: AbstractBaseUser, daily: DailyDeal, settings: Any
) -> None:
    await database_sync_to_async(started)(alice)
    communicator, _ = await stream_open(alice)

    await communicator.send_to(text_data='{"type": "ping", "pad": "' + "x" * 300 + '"}')

    error = await answer(communicator)
    assert error["error"]["code"] == "message_too_large"
    await communicator.disconnect()


async def test_a_flood_of_actions_closes_the_socket(
    alice: AbstractBaseUser, daily: DailyDeal, settings: Any
) -> None:
    settings.ATTEMPT_STREAM_BURST = 5
    settings.ATTEMPT_STREAM_ACTIONS_PER_SECOND = 0.001
    await database_sync_to_async(started)(alice)
    communicator, _ = await stream_open(alice)
    await stream(communicator, ["S"] * 5)

    await send_action(communicator, 6, "S")

    error, code = await closed_with(communicator)
    assert (error["code"], code) == ("too_many_messages", CLOSE_FLOOD)
    assert (await database_sync_to_async(stored)(alice)).log.split() == ["S"] * 5


# --- Who may stream --------------------------------------------------------------


async def test_a_visitor_who_is_not_signed_in_is_closed_with_4401(daily: DailyDeal) -> None:
    communicator = await open_socket(None)
    error, code = await closed_with(communicator)
    assert (error["code"], code) == ("not_authenticated", CLOSE_NOT_SIGNED_IN)


@pytest.mark.parametrize("date", ["yesterday", "not-a-date"])
async def test_an_attempt_not_started_or_a_bad_date_is_closed_with_4404(
    alice: AbstractBaseUser, daily: DailyDeal, date: str
) -> None:
    day = timezone.now().date() - datetime.timedelta(days=1) if date == "yesterday" else date
    communicator = await open_socket(alice, day)
    error, code = await closed_with(communicator)
    assert code == CLOSE_NO_ATTEMPT
    assert error["code"] in {"no_attempt", "day_not_open"}


async def test_a_submitted_attempt_is_closed_with_4409(
    alice: AbstractBaseUser, daily: DailyDeal
) -> None:
    await database_sync_to_async(started)(alice)
    await database_sync_to_async(game_submit)(player=alice, deal=DEAL, log="S")

    communicator = await open_socket(alice)
    error, code = await closed_with(communicator)
    assert (error["code"], code) == ("attempt_closed", CLOSE_ATTEMPT_OVER)
    assert isinstance(error["game"], int)


async def test_an_action_after_the_attempt_was_submitted_elsewhere_is_refused_and_closes(
    alice: AbstractBaseUser, daily: DailyDeal
) -> None:
    await database_sync_to_async(started)(alice)
    communicator, _ = await stream_open(alice)
    await stream(communicator, ["S"])
    await database_sync_to_async(game_submit)(player=alice, deal=DEAL, log="S")

    await send_action(communicator, 2, "S")

    error, code = await closed_with(communicator)
    assert (error["code"], code) == ("attempt_closed", CLOSE_ATTEMPT_OVER)
    game = await database_sync_to_async(Game.objects.get)()
    assert game.log == "S"


async def test_the_socket_closes_with_4401_when_its_session_ends(
    alice: AbstractBaseUser, daily: DailyDeal
) -> None:
    await database_sync_to_async(started)(alice)
    communicator, _ = await stream_open(alice)
    await stream(communicator, ["S"])

    signed_out = await database_sync_to_async(
        lambda: client_for(alice).post("/api/auth/logout/everywhere/").status_code
    )()

    assert signed_out == 204
    error, code = await closed_with(communicator)
    assert (error["code"], code) == ("session_ended", CLOSE_NOT_SIGNED_IN)


async def test_the_socket_closes_with_4401_when_the_admin_sets_a_new_password(
    alice: AbstractBaseUser, daily: DailyDeal
) -> None:
    await database_sync_to_async(started)(alice)
    communicator, _ = await stream_open(alice)
    await stream(communicator, ["S"])

    def admin_sets_password() -> int:
        admin = get_user_model().objects.create_superuser(username="root", password="x")
        browser = Client()
        browser.force_login(admin)
        new = "another long passphrase"
        return browser.post(
            f"/admin/auth/user/{alice.pk}/password/",
            {"password1": new, "password2": new, "usable_password": "true"},
        ).status_code

    assert await database_sync_to_async(admin_sets_password)() == 302
    error, code = await closed_with(communicator)
    assert (error["code"], code) == ("session_ended", CLOSE_NOT_SIGNED_IN)
    attempt = await database_sync_to_async(Attempt.objects.get)()
    assert attempt.log == "S"


# --- Another device --------------------------------------------------------------


async def test_a_save_from_another_device_is_taken_up_and_the_waiting_action_checked_on_it(
    alice: AbstractBaseUser, daily: DailyDeal
) -> None:
    await database_sync_to_async(started)(alice)
    communicator, _ = await stream_open(alice)
    await stream(communicator, ["S"])
    today = timezone.now().date()
    # Another device (the API) saves two actions, the first of them this socket's next.
    await database_sync_to_async(attempt_save)(player=alice, date=today, log="S 41 S", version=1)

    await send_action(communicator, 2, "41")
    state = await answer(communicator)
    ack = await answer(communicator)

    assert state["type"] == "state"
    assert (state["log"], state["version"]) == ("S 41 S", 2)
    assert ack == {"type": "ack", "n": 2, "version": 2}
    await stream(communicator, ["S"], first=4)
    saved = await database_sync_to_async(stored)(alice)
    assert saved.log == "S 41 S S"
    assert len(saved.times) == 4 and saved.times == sorted(saved.times)
    await communicator.disconnect()


# --- Times -----------------------------------------------------------------------


async def test_the_ranked_game_of_a_streamed_attempt_carries_the_servers_times_not_the_clients(
    alice: AbstractBaseUser, daily: DailyDeal
) -> None:
    await database_sync_to_async(started)(alice)
    communicator, _ = await stream_open(alice)
    await stream(communicator, OPENING)
    await communicator.disconnect()
    await database_sync_to_async(rewind)(alice, 60)
    streamed = (await database_sync_to_async(stored)(alice)).times

    game, _ = await database_sync_to_async(game_submit)(
        player=alice,
        deal=DEAL,
        log=[*OPENING, "S"],
        times=[0] * (len(OPENING) + 1),
    )

    assert game.times[: len(OPENING)] == streamed
    assert game.times[-1] == game.duration_ms
    assert game.review["times_by_server"] is True


async def test_a_write_on_its_way_when_the_socket_closes_is_still_stored(
    alice: AbstractBaseUser, daily: DailyDeal
) -> None:
    await database_sync_to_async(started)(alice)
    communicator, _ = await stream_open(alice)

    for number, token in enumerate(OPENING, start=1):
        await send_action(communicator, number, token)
    await communicator.disconnect()

    # Whatever was accepted before the close is stored (the page sends the rest again).
    for _ in range(200):
        if (await database_sync_to_async(stored)(alice)).log.split() == OPENING:
            break
        await asyncio.sleep(0.01)
    assert (await database_sync_to_async(stored)(alice)).log.split() == OPENING


async def test_a_write_the_database_refused_closes_the_socket_and_nothing_acknowledged_is_lost(
    alice: AbstractBaseUser, daily: DailyDeal, monkeypatch: pytest.MonkeyPatch
) -> None:
    await database_sync_to_async(started)(alice)
    communicator, _ = await stream_open(alice)
    await stream(communicator, OPENING[:2])

    # The database refuses the next write (a failover, a full disk).
    monkeypatch.setattr("games.services._STREAMED_SAVE_SQL", "UPDATE no_such_table SET x = 1")
    await send_action(communicator, 3, OPENING[2])
    error, code = await closed_with(communicator)
    assert (error["code"], code) == ("save_failed", CLOSE_SAVE_FAILED)
    monkeypatch.undo()

    # The page connects again and sends what was not acknowledged: it is stored.
    communicator, state = await stream_open(alice)
    assert (state["actions"], state["log"].split()) == (2, OPENING[:2])
    await stream(communicator, OPENING[2:], first=3)
    assert (await database_sync_to_async(stored)(alice)).log.split() == OPENING
    await communicator.disconnect()
