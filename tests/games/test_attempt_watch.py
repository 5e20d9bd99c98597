"""ws/daily/{date}/players/{username}/attempt/: watching a player's ranked attempt live.

Through the whole ASGI stack: the watcher is refused until they have finished
their own ranked attempt of the day (no spoilers); then the player's progress
reaches them as it is stored, never the table or the actions while the game is
open (it shows once the game is submitted, and to the player themselves), and
the player is told how many watch.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from easyharp_site.asgi import application
from easyharp_site.dates import today
from games import rules
from games.consumers import CLOSE_FLOOD
from games.live import actions_stored
from games.models import Attempt, DailyDeal
from games.services import attempt_assist
from games.watch import CLOSE_LOCKED, CLOSE_NOT_FOUND, CLOSE_NOT_SIGNED_IN, table_shown
from ranking.actions import game_submit
from tests.fixtures import DEAL, DEAL_NUMBER, client_for, play_ranked
from tests.games.test_attempt_stream import (
    _close_database_thread_connections,  # noqa: F401 - the fixture of the socket tests
    answer,
    closed_with,
    send_action,
    session_cookie,
    started,
    stream_open,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _no_counts_left() -> None:
    cache.clear()


async def watch_socket(
    viewer: AbstractBaseUser | None, username: str = "alice"
) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
    if viewer is not None:
        headers.append(await database_sync_to_async(session_cookie)(viewer))
    day = timezone.now().date().isoformat()
    communicator = WebsocketCommunicator(
        application, f"/ws/daily/{day}/players/{username}/attempt/", headers=headers
    )
    connected, _ = await communicator.connect()
    assert connected
    return communicator


async def next_of(communicator: WebsocketCommunicator, kind: str) -> dict[str, Any]:
    """The next message of type `kind` (acknowledgements and counts may come between)."""
    while True:
        message = await answer(communicator)
        if message["type"] == kind:
            return message


async def bob_watches_alice(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> tuple[WebsocketCommunicator, dict[str, Any]]:
    """bob has played the day and watches alice's open attempt: his socket and its
    first snapshot."""
    await database_sync_to_async(play_ranked)(bob, "S")
    await database_sync_to_async(started)(alice)
    watcher = await watch_socket(bob)
    return watcher, await next_of(watcher, "snapshot")


async def test_a_player_who_has_not_finished_their_own_ranked_attempt_is_refused(
    alice: AbstractBaseUser, bob: AbstractBaseUser, daily: DailyDeal
) -> None:
    await database_sync_to_async(started)(alice)
    await database_sync_to_async(started)(bob)  # bob's own attempt is open, not finished

    communicator = await watch_socket(bob)

    error, code = await closed_with(communicator)
    assert (error["code"], code) == ("replay_locked", CLOSE_LOCKED)
    assert error["date"] == daily.date.isoformat() and error["opens_at"].endswith("Z")


async def test_a_visitor_and_an_unknown_player_are_refused(
    alice: AbstractBaseUser, daily: DailyDeal
) -> None:
    error, code = await closed_with(await watch_socket(None))
    assert (error["code"], code) == ("not_authenticated", CLOSE_NOT_SIGNED_IN)
    await database_sync_to_async(play_ranked)(alice, "S")
    error, code = await closed_with(await watch_socket(alice, "nobody"))
    assert (error["code"], code) == ("player_not_found", CLOSE_NOT_FOUND)


def progress_of(log: list[str]) -> dict[str, Any]:
    """What the progress view says of the game after `log`."""
    game = rules.replay(rules.Deal(DEAL_NUMBER), log)
    return {
        "actions": len(log),
        "score": game.score,
        "moves": game.moves,
        "foundations": game.on_foundations,
        "won": game.is_won,
    }


async def test_while_the_game_is_open_a_watcher_sees_its_progress_never_its_table_or_actions(
    alice: AbstractBaseUser, bob: AbstractBaseUser, daily: DailyDeal
) -> None:
    # The copying channel: bob gave up his own attempt, and would play alice's
    # actions on a third account as they arrive.
    await database_sync_to_async(play_ranked)(bob, "S")
    await database_sync_to_async(started)(alice)
    player, state = await stream_open(alice)
    assert state["watchers"] == 0
    await send_action(player, 1, "S")
    assert (await next_of(player, "ack"))["n"] == 1

    watcher = await watch_socket(bob)
    snapshot = await answer(watcher)
    assert snapshot["type"] == "snapshot" and snapshot["view"] == "progress"
    assert (snapshot["player"], snapshot["deal"], snapshot["log"]) == ("alice", None, None)
    assert (snapshot["status"], snapshot["game"], snapshot["watchers"]) == ("open", None, 1)
    assert {key: snapshot[key] for key in progress_of(["S"])} == progress_of(["S"])
    assert (await next_of(player, "watchers"))["count"] == 1

    game = ["S", "41", "S", "S", "U", "S"]
    for number, token in enumerate(game[1:], start=2):
        await send_action(player, number, token)
    progress: dict[str, Any] = {"actions": 1}
    while progress["actions"] < len(game):
        message = await answer(watcher)
        assert message["type"] == "progress", message  # never `actions`, never a log
        assert message["actions"] > progress["actions"]
        progress = message
    assert {key: progress[key] for key in progress_of(game)} == progress_of(game)
    assert await watcher.receive_nothing(timeout=0.2)

    await watcher.disconnect()
    assert (await next_of(player, "watchers"))["count"] == 0
    await player.disconnect()


async def test_a_progress_watcher_that_missed_feed_items_goes_on_from_the_next_one(
    alice: AbstractBaseUser, bob: AbstractBaseUser, daily: DailyDeal
) -> None:
    """Each feed item carries the game's progress as the player's socket has it: a
    watcher of the progress that missed some (a lost message) passes on the next
    one's, with no new read of the attempt; an older one is left out."""
    watcher, snapshot = await bob_watches_alice(alice, bob)
    assert (snapshot["view"], snapshot["actions"]) == ("progress", 0)
    attempt = await database_sync_to_async(Attempt.objects.get)(player=alice)
    later = {"actions": 5, "score": 40, "moves": 5, "foundations": 1, "won": False}

    actions_stored(attempt.pk, 5, ["S"], 900, progress=later)
    actions_stored(attempt.pk, 3, ["S", "S"], 800, progress={**later, "actions": 4})

    assert await next_of(watcher, "progress") == {"type": "progress", **later, "elapsed_ms": 900}
    assert await watcher.receive_nothing(timeout=0.3)  # no snapshot, nothing older
    await watcher.disconnect()


async def test_the_player_watching_their_own_game_sees_its_table_move(
    alice: AbstractBaseUser, daily: DailyDeal
) -> None:
    await database_sync_to_async(started)(alice)
    player, _ = await stream_open(alice)
    await send_action(player, 1, "S")
    assert (await next_of(player, "ack"))["n"] == 1

    watcher = await watch_socket(alice)
    snapshot = await next_of(watcher, "snapshot")
    assert (snapshot["view"], snapshot["deal"], snapshot["log"]) == ("table", DEAL, "S")

    await send_action(player, 2, "41")
    await send_action(player, 3, "S")
    seen: list[str] = ["S"]
    while len(seen) < 3:
        moved = await next_of(watcher, "actions")
        assert moved["from"] == len(seen) + 1, "each follows what was sent before"
        seen += moved["actions"]
    assert seen == ["S", "41", "S"]
    await watcher.disconnect()
    await player.disconnect()


async def test_a_watcher_is_shown_the_table_once_the_attempt_is_submitted(
    alice: AbstractBaseUser, bob: AbstractBaseUser, daily: DailyDeal
) -> None:
    watcher, snapshot = await bob_watches_alice(alice, bob)
    assert snapshot["view"] == "progress"

    game, _ = await database_sync_to_async(game_submit)(player=alice, deal=DEAL, log="S S")

    assert await next_of(watcher, "closed") == {"type": "closed", "game": game.pk}
    finished = await next_of(watcher, "snapshot")
    assert (finished["view"], finished["status"], finished["game"]) == ("table", "closed", game.pk)
    assert (finished["deal"], finished["log"]) == (DEAL, "S S")
    # Its clock stops at the game's time on the boards, to the millisecond.
    assert finished["elapsed_ms"] == game.duration_ms
    await watcher.disconnect()

    # A watcher who comes afterwards learns it from the snapshot.
    later = await watch_socket(bob)
    snapshot = await next_of(later, "snapshot")
    assert (snapshot["status"], snapshot["game"], snapshot["log"]) == ("closed", game.pk, "S S")
    assert snapshot["view"] == "table"
    await later.disconnect()

    # And its replay is open to him.
    replay = await database_sync_to_async(
        lambda: client_for(bob).get(f"/api/games/{game.pk}/replay/")
    )()
    assert replay.status_code == 200


async def test_no_other_path_gives_a_watcher_the_open_attempts_actions(
    alice: AbstractBaseUser, bob: AbstractBaseUser, daily: DailyDeal
) -> None:
    await database_sync_to_async(play_ranked)(bob, "S")
    await database_sync_to_async(started)(alice)
    player, _ = await stream_open(alice)
    await send_action(player, 1, "41")
    assert (await next_of(player, "ack"))["n"] == 1

    def reads() -> tuple[dict[str, Any], str]:
        attempt = client_for(bob).get(f"/api/daily/{daily.date.isoformat()}/attempt/").json()
        browser = Client()
        browser.force_login(bob)
        return attempt, browser.get("/players/alice/").content.decode()

    attempt, page = await database_sync_to_async(reads)()
    # The attempt API reads the signed-in player's own attempt only: bob's, given up.
    assert attempt["log"] in ("S", ["S"])
    # The player's page links the live page; its games are the stored ones only.
    assert 'id="watch-live"' in page and "/replays/" not in page
    await player.disconnect()


async def test_a_client_that_asks_gets_a_fresh_snapshot(
    alice: AbstractBaseUser, bob: AbstractBaseUser, daily: DailyDeal
) -> None:
    watcher, _ = await bob_watches_alice(alice, bob)

    await watcher.send_json_to({"type": "snapshot"})

    again = await answer(watcher)
    assert (again["type"], again["view"], again["actions"]) == ("snapshot", "progress", 0)
    await watcher.disconnect()


def test_the_table_is_shown_once_the_game_is_finished_or_its_day_closed_or_to_its_player() -> None:
    running, closed = today(), today() - datetime.timedelta(days=1)
    assert not table_shown(finished=False, date=running, own=False)
    assert table_shown(finished=True, date=running, own=False)
    assert table_shown(finished=False, date=closed, own=False)
    assert table_shown(finished=False, date=running, own=True)


async def test_a_hint_asked_while_watched_makes_the_watchers_snapshot_assisted(
    alice: AbstractBaseUser, bob: AbstractBaseUser, daily: DailyDeal
) -> None:
    watcher, snapshot = await bob_watches_alice(alice, bob)
    assert snapshot["assisted"] is False

    assisted = await database_sync_to_async(attempt_assist)(player=alice, deal=DEAL)

    assert assisted
    again = await next_of(watcher, "snapshot")
    assert (again["assisted"], again["status"]) == (True, "open")
    await watcher.disconnect()


async def test_a_flood_of_messages_closes_the_watching_socket(
    alice: AbstractBaseUser, bob: AbstractBaseUser, daily: DailyDeal, settings: Any
) -> None:
    settings.ATTEMPT_STREAM_BURST = 3
    settings.ATTEMPT_STREAM_ACTIONS_PER_SECOND = 0.001
    watcher, _ = await bob_watches_alice(alice, bob)

    for _ in range(3):
        await watcher.send_json_to({"type": "ping"})
        assert await answer(watcher) == {"type": "pong"}
    await watcher.send_json_to({"type": "ping"})

    error, code = await closed_with(watcher)
    assert (error["code"], code) == ("too_many_messages", CLOSE_FLOOD)


async def test_one_watcher_past_the_limit_is_refused_and_its_place_is_not_kept(
    alice: AbstractBaseUser,
    bob: AbstractBaseUser,
    make_player: Any,
    daily: DailyDeal,
    settings: Any,
) -> None:
    settings.LIVE_WATCHERS_MAX = 1
    carol = await database_sync_to_async(make_player)("carol")
    await database_sync_to_async(play_ranked)(bob, "S")
    await database_sync_to_async(play_ranked)(carol, "S")
    await database_sync_to_async(started)(alice)
    first = await watch_socket(bob)
    assert (await next_of(first, "snapshot"))["watchers"] == 1

    error, code = await closed_with(await watch_socket(carol))
    assert (error["code"], code) == ("too_many_watchers", CLOSE_FLOOD)

    # The refused socket was not counted: once the first leaves, carol watches.
    await first.disconnect(timeout=10)
    again = await watch_socket(carol)
    assert (await next_of(again, "snapshot"))["watchers"] == 1
    await again.disconnect()


async def test_the_watching_socket_closes_with_4401_when_its_session_ends(
    alice: AbstractBaseUser, bob: AbstractBaseUser, daily: DailyDeal
) -> None:
    watcher, _ = await bob_watches_alice(alice, bob)

    signed_out = await database_sync_to_async(
        lambda: client_for(bob).post("/api/auth/logout/everywhere/").status_code
    )()

    assert signed_out == 204
    error, code = await closed_with(watcher)
    assert (error["code"], code) == ("session_ended", CLOSE_NOT_SIGNED_IN)
