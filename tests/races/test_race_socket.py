"""ws/races/{code}/: a race's players stream their actions and hear each other's progress.

Through the whole ASGI stack with `WebsocketCommunicator`, signed in by the
session cookie, against the real services and database (the channel layer of
the tests' settings carries the race's group).
"""

from __future__ import annotations

import asyncio
import datetime
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.cache import cache
from django.db import connections
from django.utils import timezone

from games import review
from games.consumers import CLOSE_FLOOD
from races import services
from races.consumers import CLOSE_NO_RACE
from races.models import Race, Racer
from ranking.actions import player_ban
from tests.fixtures import WIN_LOG, client_for
from tests.races.racing import open_socket, race_for, racer, rewind, running, welcomed
from tests.timings import pinned

pytestmark = pytest.mark.django_db(transaction=True)

OPENING = WIN_LOG[:6]


@pytest.fixture(autouse=True)
async def _close_database_thread_connections() -> AsyncIterator[None]:
    """The socket's reads and writes run in Channels' database thread: close its
    connection after each test, so that the test database can be dropped."""
    yield
    await database_sync_to_async(connections.close_all)()


sync = database_sync_to_async


async def send_action(communicator: WebsocketCommunicator, number: int, token: str) -> None:
    await communicator.send_json_to({"type": "action", "n": number, "action": token})


async def next_of(communicator: WebsocketCommunicator, kind: str) -> dict[str, Any]:
    """The next message of type `kind` (the race's states between are passed over)."""
    while True:
        message: dict[str, Any] = await communicator.receive_json_from(timeout=10)
        if message["type"] == kind:
            return message
        assert message["type"] == "race", message


async def stream(communicator: WebsocketCommunicator, tokens: list[str], first: int = 1) -> None:
    """Send `tokens` as actions `first`..., each once the one before is acknowledged."""
    for number, token in enumerate(tokens, start=first):
        await send_action(communicator, number, token)
        ack = await next_of(communicator, "ack")
        assert ack["n"] == number, ack


async def closed_with(communicator: WebsocketCommunicator) -> tuple[dict[str, Any], int]:
    error = await communicator.receive_json_from(timeout=5)
    assert error["type"] == "error", error
    closing = await communicator.receive_output(timeout=5)
    assert closing["type"] == "websocket.close", closing
    return error["error"], closing["code"]


def started_race(host: AbstractBaseUser, *players: AbstractBaseUser, minutes: int = 10) -> Race:
    return running(race_for(host, *players, minutes=minutes))


# --- Connecting -----------------------------------------------------------------------


async def test_a_player_is_welcomed_with_their_stored_game_and_the_race(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = await sync(started_race)(alice, bob)

    communicator, welcome = await welcomed(alice, race.code)

    assert (welcome["you"], welcome["log"], welcome["actions"], welcome["version"]) == (
        "alice", "", 0, 0,
    )  # fmt: skip
    assert welcome["race"]["status"] == "running"
    assert welcome["race"]["deal"] == "EH1-N-AAAAAAE"
    assert [p["player"] for p in welcome["race"]["players"]] == ["alice", "bob"]
    assert "server_now" in welcome
    await communicator.disconnect()


async def test_an_unknown_race_is_refused(alice: AbstractBaseUser) -> None:
    unknown = await open_socket(alice, "no-such-race")
    error, code = await closed_with(unknown)
    assert (error["code"], code) == ("not_found", CLOSE_NO_RACE)

    anonymous = await open_socket(None, "no-such-race")
    error, code = await closed_with(anonymous)
    assert (error["code"], code) == ("not_found", CLOSE_NO_RACE)


# --- Watching -----------------------------------------------------------------------


async def watching(player: AbstractBaseUser | None, code: str) -> tuple[Any, Any]:
    communicator = await open_socket(player, code)
    first = await communicator.receive_json_from(timeout=5)
    assert first["type"] == "watching", first
    return communicator, first


def players(message: dict[str, Any]) -> list[str]:
    return [player["player"] for player in message["race"]["players"]]


async def test_whoever_has_not_joined_watches_the_lobby_live_signed_in_or_not(
    alice: AbstractBaseUser, bob: AbstractBaseUser, make_player: Any
) -> None:
    race = await sync(race_for)(alice)
    carol = await sync(make_player)("carol")
    bobs, first = await watching(bob, race.code)
    anonymous, anonymous_first = await watching(None, race.code)

    await sync(services.race_join)(player=carol, code=race.code)
    joined = [await next_of(bobs, "race"), await next_of(anonymous, "race")]
    await sync(services.race_leave)(player=carol, code=race.code)
    left = [await next_of(bobs, "race"), await next_of(anonymous, "race")]

    assert (first["you"], anonymous_first["you"]) == ("bob", None)
    assert players(first) == players(anonymous_first) == ["alice"]
    assert [players(message) for message in joined] == [["alice", "carol"]] * 2
    assert [players(message) for message in left] == [["alice"]] * 2
    await asyncio.gather(bobs.disconnect(), anonymous.disconnect())


async def test_a_watcher_sees_the_countdown_and_progress_but_never_the_deal(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = await sync(race_for)(alice)
    anonymous, _ = await watching(None, race.code)

    await sync(services.race_start)(player=alice, code=race.code)
    started = await next_of(anonymous, "race")
    await sync(rewind)(race, 5)
    alices, _ = await welcomed(alice, race.code)
    await stream(alices, WIN_LOG[:40])
    stored = (await sync(racer)(race, alice)).moves
    heard = [await next_of(anonymous, "race")]
    while heard[-1]["race"]["players"][0]["moves"] != stored:
        heard.append(await next_of(anonymous, "race"))
    await anonymous.send_json_to({"type": "ping"})
    answer = await next_of(anonymous, "race")
    await send_action(anonymous, 1, "S")
    refused = await next_of(anonymous, "refused")

    assert started["race"]["status"] == "countdown" and started["race"]["starts_at"]
    assert all(message["race"]["deal"] is None for message in [started, *heard, answer])
    assert heard[-1]["race"]["players"][0]["foundations"] > 0
    for token in {*WIN_LOG[:40]} - {"S"}:
        assert f'"{token}"' not in json.dumps(heard)
    assert answer["race"]["status"] == "running"
    assert refused["error"]["code"] == "not_in_race"
    await asyncio.gather(alices.disconnect(), anonymous.disconnect())


async def test_watchers_past_the_limit_are_refused_and_a_place_freed_is_taken_again(
    alice: AbstractBaseUser, bob: AbstractBaseUser, settings: Any
) -> None:
    await sync(cache.clear)()
    settings.LIVE_WATCHERS_MAX = 2
    race = await sync(race_for)(alice)
    bobs, _ = await watching(bob, race.code)
    anonymous, _ = await watching(None, race.code)

    refused = await open_socket(None, race.code)
    error, code = await closed_with(refused)
    assert (error["code"], code) == ("too_many_watchers", CLOSE_FLOOD)
    # The race's players are never counted as watchers: alice is welcomed.
    alices, welcome = await welcomed(alice, race.code)
    assert welcome["you"] == "alice"

    await anonymous.disconnect(timeout=10)
    again, first = await watching(None, race.code)
    assert players(first) == ["alice"]
    await asyncio.gather(bobs.disconnect(), again.disconnect(), alices.disconnect())


async def test_a_player_who_leaves_the_lobby_watches_from_then_on_without_the_deal(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = await sync(race_for)(alice, bob)
    bobs, _ = await welcomed(bob, race.code)

    await sync(services.race_leave)(player=bob, code=race.code)
    now_watching = await next_of(bobs, "watching")
    await sync(services.race_start)(player=alice, code=race.code)
    started = await next_of(bobs, "race")

    assert players(now_watching) == ["alice"]
    assert started["race"]["status"] == "countdown" and started["race"]["deal"] is None
    await bobs.disconnect()


# --- Actions ------------------------------------------------------------------------


async def test_each_action_is_checked_stored_with_the_race_time_and_acknowledged(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = await sync(started_race)(alice, bob)
    communicator, _ = await welcomed(alice, race.code)

    before = timezone.now()
    await stream(communicator, OPENING)
    after = timezone.now()

    stored = await sync(racer)(race, alice)
    assert stored.log.split() == OPENING and stored.version == len(OPENING)
    assert race.starts_at is not None
    low = (before - race.starts_at).total_seconds() * 1000 - 1
    high = (after - race.starts_at).total_seconds() * 1000 + 1
    assert stored.times == sorted(stored.times)
    assert all(low <= time <= high for time in stored.times), (stored.times, low, high)
    await communicator.disconnect()


async def test_an_illegal_action_is_refused_with_the_engines_reason_and_nothing_is_stored(
    alice: AbstractBaseUser,
) -> None:
    race = await sync(started_race)(alice)
    communicator, _ = await welcomed(alice, race.code)
    await stream(communicator, ["S", "S"])

    await send_action(communicator, 3, "12")
    refused = await next_of(communicator, "refused")

    assert refused["n"] == 3 and refused["error"]["code"] == "illegal_action"
    assert refused["error"]["reason_code"] == "column_refuses"
    assert (refused["error"]["index"], refused["error"]["token"]) == (3, "12")
    assert (await sync(racer)(race, alice)).log == "S S"
    await stream(communicator, ["S"], first=3)
    await communicator.disconnect()


async def test_a_resent_action_is_acknowledged_again_and_stored_once(
    alice: AbstractBaseUser,
) -> None:
    race = await sync(started_race)(alice)
    communicator, _ = await welcomed(alice, race.code)
    await stream(communicator, OPENING[:3])

    await send_action(communicator, 2, OPENING[1])
    again = await next_of(communicator, "ack")

    assert again == {"type": "ack", "n": 2, "version": 3}
    assert (await sync(racer)(race, alice)).log.split() == OPENING[:3]
    await communicator.disconnect()


async def test_a_gap_or_another_action_at_a_used_number_is_refused(
    alice: AbstractBaseUser,
) -> None:
    race = await sync(started_race)(alice)
    communicator, _ = await welcomed(alice, race.code)
    await stream(communicator, ["S", "41"])

    await send_action(communicator, 4, "S")
    gap = await next_of(communicator, "refused")
    await send_action(communicator, 2, "S")
    conflict = await next_of(communicator, "refused")

    assert (gap["error"]["code"], gap["error"]["next"]) == ("out_of_order", 3)
    assert (conflict["error"]["code"], conflict["error"]["stored"]) == ("action_conflict", "41")
    assert (await sync(racer)(race, alice)).log == "S 41"
    await communicator.disconnect()


async def test_an_action_before_the_start_is_refused(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = await sync(race_for)(alice, bob)
    communicator, welcome = await welcomed(alice, race.code)
    assert welcome["race"]["status"] == "lobby" and welcome["race"]["deal"] is None

    await send_action(communicator, 1, "S")
    in_lobby = await next_of(communicator, "refused")
    await sync(services.race_start)(player=alice, code=race.code)
    countdown = await next_of(communicator, "race")
    await send_action(communicator, 1, "S")
    in_countdown = await next_of(communicator, "refused")

    assert in_lobby["error"]["code"] == in_countdown["error"]["code"] == "race_not_started"
    assert countdown["race"]["status"] == "countdown" and countdown["race"]["deal"]
    assert (await sync(racer)(race, alice)).log == ""
    await communicator.disconnect()


async def test_a_socket_connecting_again_goes_on_from_the_stored_game(
    alice: AbstractBaseUser,
) -> None:
    race = await sync(started_race)(alice)
    first, _ = await welcomed(alice, race.code)
    await stream(first, OPENING[:3])
    await first.disconnect()

    again, welcome = await welcomed(alice, race.code)
    assert (welcome["log"].split(), welcome["actions"]) == (OPENING[:3], 3)
    await stream(again, OPENING[3:], first=4)
    await again.disconnect()

    assert (await sync(racer)(race, alice)).log.split() == OPENING


# --- The others ---------------------------------------------------------------------


async def test_the_others_hear_each_players_progress_but_never_their_actions(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = await sync(started_race)(alice, bob)
    alices, _ = await welcomed(alice, race.code)
    bobs, _ = await welcomed(bob, race.code)

    await stream(alices, WIN_LOG[:40])

    heard = None
    while True:
        message = await bobs.receive_json_from(timeout=5)
        assert message["type"] == "race", message
        shown = {p["player"]: p for p in message["race"]["players"]}
        if shown["alice"]["moves"] == (await sync(racer)(race, alice)).moves:
            heard = message
            break
    assert heard is not None
    assert shown["alice"]["foundations"] > 0 and shown["bob"]["moves"] == 0
    for token in {*WIN_LOG[:40]} - {"S"}:
        assert f'"{token}"' not in str(heard).replace("'", '"')
    await alices.disconnect()
    await bobs.disconnect()


async def test_a_win_ends_the_race_for_every_player(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    # Every action is received at a person's pace: the server's clock moves 100 ms on
    # at each reading, two readings or more an action.
    with pinned(timezone.now().date(), step_ms=100):
        race = await sync(started_race)(alice, bob)
        alices, _ = await welcomed(alice, race.code)
        bobs, _ = await welcomed(bob, race.code)
        await stream(bobs, WIN_LOG[:10])

        for number, token in enumerate(WIN_LOG, start=1):
            await send_action(alices, number, token)
        await next_of(alices, "ack")
        while True:
            message = await bobs.receive_json_from(timeout=20)
            if message["type"] == "race" and message["race"]["status"] == "over":
                break
        await send_action(bobs, 11, WIN_LOG[10])
        refused = await next_of(bobs, "refused")

    assert (message["race"]["end"], message["race"]["winner"]) == ("won", "alice")
    assert all(player["game"] for player in message["race"]["players"])
    assert refused["error"]["code"] == "race_over"
    assert (await sync(racer)(race, bob)).log.split() == WIN_LOG[:10]
    await alices.disconnect()
    await bobs.disconnect()


async def test_a_bot_sending_its_win_at_once_is_refused_and_the_race_goes_on(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    with pinned(timezone.now().date()) as clock:
        race = await sync(started_race)(alice, bob)
        alices, _ = await welcomed(alice, race.code)
        # The whole win within 0.3 s by the server's clock.
        refusals = []
        for number, token in enumerate(WIN_LOG, start=1):
            clock.advance(300 / len(WIN_LOG))
            await send_action(alices, number, token)
            message = await alices.receive_json_from(timeout=10)
            while message["type"] == "race":
                message = await alices.receive_json_from(timeout=10)
            if message["type"] == "refused":
                refusals.append(message)
                break
        held = (await sync(racer)(race, alice)).log.split()
        state = (await sync(Race.objects.get)(pk=race.pk)).status(clock.at)

        [refused] = refusals
        assert refused["error"]["code"] == "too_fast"
        assert refused["error"]["retry_after_ms"] > 0
        assert "faster than a person plays" in refused["error"]["message"]
        moves = [token for token in WIN_LOG[: refused["n"]] if token != "S"]
        # Ten moves within a second of the start: the tenth is refused.
        assert len(moves) == review.BURST_WINDOW_MOVES
        assert held == WIN_LOG[: refused["n"] - 1] and state == "running"

        # Sent again when the server said, the move counts.
        clock.advance(refused["error"]["retry_after_ms"])
        await send_action(alices, refused["n"], WIN_LOG[refused["n"] - 1])
        assert (await next_of(alices, "ack"))["n"] == refused["n"]
        await alices.disconnect()


async def test_the_race_ends_at_its_time_limit_with_nobody_acting(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = await sync(started_race)(alice, bob, minutes=5)
    await sync(lambda: Racer.objects.filter(race=race, player=bob).update(score=5))()
    # Half a second of the race left.
    await sync(rewind)(race, 5 * 60 - 0.5)
    bobs, _ = await welcomed(bob, race.code)

    while True:
        # Generous: the end stores each player's game, slow on a crowded machine.
        message = await bobs.receive_json_from(timeout=30)
        if message["type"] == "race" and message["race"]["status"] == "over":
            break

    stored = await sync(Race.objects.get)(pk=race.pk)
    assert stored.end == Race.End.TIME and message["race"]["end"] == "time"
    assert stored.ended_at == stored.ends_at
    await bobs.disconnect()


async def test_the_heartbeat_answers_with_the_race_and_shows_who_is_away(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = await sync(started_race)(alice, bob)
    long_ago = timezone.now() - datetime.timedelta(minutes=5)
    await sync(lambda: Racer.objects.filter(race=race).update(seen_at=long_ago))()
    alices, _ = await welcomed(alice, race.code)

    await alices.send_json_to({"type": "ping"})
    answer = await next_of(alices, "race")

    shown = {p["player"]: p for p in answer["race"]["players"]}
    assert (shown["alice"]["away"], shown["bob"]["away"]) == (False, True)
    await alices.disconnect()


async def test_a_player_leaving_is_heard_by_the_others_and_refused_after(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = await sync(started_race)(alice, bob)
    alices, _ = await welcomed(alice, race.code)
    bobs, _ = await welcomed(bob, race.code)

    await sync(services.race_leave)(player=bob, code=race.code)
    heard = await next_of(alices, "race")
    await send_action(bobs, 1, "S")
    refused = await next_of(bobs, "refused")

    assert {p["player"]: p["left"] for p in heard["race"]["players"]} == {
        "alice": False,
        "bob": True,
    }
    assert refused["error"]["code"] == "left_race"
    await asyncio.gather(alices.disconnect(), bobs.disconnect())


async def test_a_banned_player_leaves_the_lobby_and_the_others_see_it_at_once(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = await sync(race_for)(alice, bob)
    alices, welcome = await welcomed(alice, race.code)
    assert [p["player"] for p in welcome["race"]["players"]] == ["alice", "bob"]

    await sync(player_ban)(player=bob, moderator=None, reason="cheating")
    heard = await next_of(alices, "race")

    assert [p["player"] for p in heard["race"]["players"]] == ["alice"]
    await alices.disconnect()


async def test_signing_out_everywhere_closes_the_race_socket(alice: AbstractBaseUser) -> None:
    race = await sync(started_race)(alice)
    communicator, _ = await welcomed(alice, race.code)

    signed_out = await sync(lambda: client_for(alice).post("/api/auth/logout/everywhere/"))()

    assert signed_out.status_code == 204
    error = await next_of(communicator, "error")
    closing = await communicator.receive_output(timeout=5)
    assert error["error"]["code"] == "session_ended"
    assert closing == {"type": "websocket.close", "code": 4401}
