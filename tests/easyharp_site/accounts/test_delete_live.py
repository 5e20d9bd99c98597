"""Deleting a player on PostgreSQL while their boards are watched live.

Watchers of both of today's boards (anonymous, another player) are updated
after the deletion commits, the deleted player's own sockets are closed (their
session ended), and every board of every day the player was on equals a fresh
recomputation from the games.
Runs on the in-memory channel layer and on Redis.
"""

from __future__ import annotations

import datetime
import random
from collections.abc import Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.base_user import AbstractBaseUser

from games.models import DailyDeal
from leaderboards.consumers import CLOSE_NOT_SIGNED_IN
from leaderboards.models import BoardEntry
from tests.fixtures import STOCK_CYCLE, WIN_LOG, client_for, stored_game
from tests.leaderboards.test_consumers import (  # noqa: F401 - fixtures of the live tests
    _close_database_thread_connections,
    board_of,
    connect,
    drain,
    flushed,
    fresh_board,
    layers,
    random_log,
    submit,
)

from .boards import assert_boards_equal_a_recomputation
from .conftest import PASSWORD

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _play(daily: DailyDeal, make_player: Callable[[str], AbstractBaseUser]) -> dict[str, Any]:
    rng = random.Random(11)
    players = {name: make_player(name) for name in ("alice", "bob", "carol", "dave", "erin")}
    alice = players["alice"]
    submit(alice, WIN_LOG)  # first on both boards
    submit(alice, STOCK_CYCLE + WIN_LOG)
    submit(players["bob"], STOCK_CYCLE + WIN_LOG)
    for name in ("carol", "dave", "erin"):
        submit(players[name], random_log(rng, rng.randint(5, 60)))
    yesterday = DailyDeal.objects.create(date=daily.date - datetime.timedelta(days=1), number=9)
    stored_game(player=alice, daily=yesterday, score=950, moves=180, won=True)
    stored_game(player=players["bob"], daily=yesterday, score=700, moves=260, won=True)
    stored_game(player=players["carol"], daily=yesterday, score=300, moves=90)
    return {"players": players, "yesterday": yesterday}


def _delete(player: AbstractBaseUser) -> int:
    answer = client_for(player).post("/api/auth/delete/", {"password": PASSWORD}, format="json")
    return int(answer.status_code)


@pytest.mark.usefixtures("flushed")
async def test_watchers_see_the_player_leave_and_the_boards_equal_a_recomputation(
    daily: DailyDeal, make_player: Callable[[str], AbstractBaseUser]
) -> None:
    played = await database_sync_to_async(_play)(daily, make_player)
    alice, bob = played["players"]["alice"], played["players"]["bob"]
    sockets = []
    for order in ("score", "moves"):
        for watcher in (None, bob, alice):
            communicator, snapshot = await connect(daily.date, order, player=watcher)
            sockets.append([communicator, order, watcher, board_of(snapshot), snapshot["version"]])
    try:
        assert sockets[0][3]["entries"][0]["player"] == "alice"

        assert await database_sync_to_async(_delete)(alice) == 204

        for socket in sockets:
            communicator, order, watcher, board, version = socket
            if watcher is alice:
                # Updates of her board may come first: the games played before
                # (announced for a whole gathering at once), or her own leaving.
                message = await communicator.receive_json_from(timeout=5)
                for _ in range(10):
                    if message.get("type") != "update":
                        break
                    message = await communicator.receive_json_from(timeout=5)
                assert message["error"]["code"] == "session_ended", message
                closed = await communicator.receive_output(timeout=5)
                assert closed["code"] == CLOSE_NOT_SIGNED_IN
                continue
            socket[4], applied = await drain(communicator, board, version)
            assert applied >= 1, (order, watcher)
            assert "alice" not in [entry["player"] for entry in board["entries"]]
            expected = await database_sync_to_async(fresh_board)(daily.date, order, watcher)
            assert board == expected, (order, watcher)
        # Bob moved up to first on both boards, and says so on his own socket.
        bobs = next(s for s in sockets if s[1] == "moves" and s[2] is bob)
        assert bobs[3]["me"]["rank"] == 1

        def check() -> None:
            assert not BoardEntry.objects.filter(player=alice).exists()
            for date in (daily.date, played["yesterday"].date):
                assert_boards_equal_a_recomputation(date)

        await database_sync_to_async(check)()
    finally:
        for communicator, *_ in sockets:
            await communicator.disconnect()
