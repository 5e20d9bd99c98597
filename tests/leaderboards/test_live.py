"""`board_changed`, the service layer's hook: one message per board, and never an error."""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
import time
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.layers import InMemoryChannelLayer, channel_layers, get_channel_layer
from django.contrib.auth import get_user_model
from django.db import connections
from django.utils import timezone

from easyharp_site.layer import GATHER_SECONDS
from games.models import DailyDeal, Game
from games.services import attempt_start
from leaderboards import live
from leaderboards.models import BoardEntry
from ranking.actions import game_submit
from tests.fixtures import at_human_pace
from tests.paths import GAME_VECTORS

DEAL = "EH1-N-AAAAAAE"
VECTORS = GAME_VECTORS
WIN_LOG: list[str] = next(
    game["log"].split()
    for game in map(json.loads, VECTORS.read_text().splitlines())
    if game["deal"] == DEAL and game.get("won")
)


class RefusingLayer(InMemoryChannelLayer):
    """A channel layer whose server is down: every send fails as channels-redis does."""

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")


class HangingLayer(InMemoryChannelLayer):
    """A channel layer whose server never answers."""

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        await asyncio.sleep(3600)


def use_default_layer(settings: Any, backend: str) -> None:
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": backend}}


@pytest.fixture(autouse=True)
def _fresh_layers() -> Any:
    yield
    channel_layers.backends.clear()


@pytest.fixture
def daily(transactional_db: None) -> DailyDeal:
    return DailyDeal.objects.create(date=timezone.now().date(), number=4)


DAY = datetime.date(2026, 3, 14)


async def listening_to_both_boards(settings: Any, day: datetime.date) -> tuple[Any, dict[str, str]]:
    """An in-memory layer as the default, and a channel in each of the day's two
    boards' groups: (the layer, the channel of each order)."""
    use_default_layer(settings, "channels.layers.InMemoryChannelLayer")
    layer = get_channel_layer()
    channels = {}
    for order in ("score", "moves"):
        channels[order] = await layer.new_channel()
        await layer.group_add(live.BoardKey(day, order).group, channels[order])
    return layer, channels


async def test_it_sends_one_change_message_to_the_group_of_each_board(settings: Any) -> None:
    layer, channels = await listening_to_both_boards(settings, DAY)

    await sync_to_async(live.board_changed)(date=DAY, orders=("score", "moves", "fastest"))

    for order, channel in channels.items():
        message = await asyncio.wait_for(layer.receive(channel), 1)
        assert message == {"type": "board.changed", "date": "2026-03-14", "order": order}
    assert layer.channels.get(channels["score"]) is None, "one message per board, no more"


async def test_changes_handed_on_together_go_out_as_one_message_per_board(settings: Any) -> None:
    # Under the server, a request's change waits GATHER_SECONDS for
    # others: each board gets one message naming every player who moved, or
    # none (every narrowed board) when one change named nobody.
    layer, channels = await listening_to_both_boards(settings, DAY)

    def three_requests() -> None:
        live.board_changed(date=DAY, orders=("score", "moves"), players=(7,))
        live.board_changed(date=DAY, orders=("moves",), players=(3, 7))
        live.board_changed(date=DAY, orders=("score",))

    await sync_to_async(three_requests)()

    score = await asyncio.wait_for(layer.receive(channels["score"]), 1)
    moves = await asyncio.wait_for(layer.receive(channels["moves"]), 1)
    assert score == {"type": "board.changed", "date": "2026-03-14", "order": "score"}
    assert moves == {"type": "board.changed", "date": "2026-03-14", "order": "moves"} | {
        "players": [3, 7]
    }
    await asyncio.sleep(3 * GATHER_SECONDS)
    assert all(layer.channels.get(channel) is None for channel in channels.values())

    # The next change starts a new gathering.
    await sync_to_async(live.board_changed)(date=DAY, orders=("score",), players=(9,))
    again = await asyncio.wait_for(layer.receive(channels["score"]), 1)
    assert again["players"] == [9]


class RecordingLayer(InMemoryChannelLayer):
    """A channel layer that keeps every group message sent to it."""

    sent: list[tuple[str, dict[str, Any]]] = []

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        self.sent.append((group, message))


def test_it_does_nothing_for_no_board(
    settings: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # `board_changed` never raises, so "nothing happened" is shown by what the
    # layer received and what was logged, not by the absence of an error.
    monkeypatch.setattr(RecordingLayer, "sent", [])
    use_default_layer(settings, "tests.leaderboards.test_live.RecordingLayer")
    day = datetime.date(2026, 3, 14)
    with caplog.at_level(logging.DEBUG, logger="leaderboards.live"):
        live.board_changed(date=day, orders=())
        live.board_changed(date=day, orders=("fastest",), players=(1,))
    assert RecordingLayer.sent == []
    assert caplog.records == []

    live.board_changed(date=day, orders=("moves",))
    assert RecordingLayer.sent == [
        (
            "leaderboard.2026-03-14.moves",
            {"type": "board.changed", "date": "2026-03-14", "order": "moves"},
        )
    ]


def test_a_submission_is_stored_when_the_channel_layer_is_down(
    settings: Any, daily: DailyDeal, caplog: pytest.LogCaptureFixture
) -> None:
    use_default_layer(settings, "tests.leaderboards.test_live.RefusingLayer")
    player = get_user_model().objects.create_user(username="alice")

    attempt, _ = attempt_start(player=player, date=daily.date)
    at_human_pace(attempt.pk, WIN_LOG)
    with caplog.at_level(logging.WARNING, logger="leaderboards.live"):
        game, created = game_submit(player=player, deal=DEAL, log=WIN_LOG)

    assert created
    assert Game.objects.filter(pk=game.pk, won=True).exists()
    assert BoardEntry.objects.filter(player=player, date=daily.date).count() == 2
    warning = next(record for record in caplog.records if record.name == "leaderboards.live")
    assert "the change itself is stored" in warning.getMessage()
    assert "Connection refused" in str(warning.exc_info[1])


def test_a_hanging_channel_layer_holds_a_submission_only_until_the_timeout(
    settings: Any, daily: DailyDeal, caplog: pytest.LogCaptureFixture
) -> None:
    use_default_layer(settings, "tests.leaderboards.test_live.HangingLayer")
    settings.LIVE_BOARD_SEND_TIMEOUT = 0.2
    player = get_user_model().objects.create_user(username="alice")

    attempt, _ = attempt_start(player=player, date=daily.date)
    at_human_pace(attempt.pk, WIN_LOG)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="leaderboards.live"):
        game, _ = game_submit(player=player, deal=DEAL, log=WIN_LOG)

    # Not a speed target: the layer would hang for an hour without the timeout.
    assert time.monotonic() - started < 30
    assert Game.objects.filter(pk=game.pk).exists()
    assert any(record.name == "leaderboards.live" for record in caplog.records)


class RecordingSocket:
    """A watcher of a board as the hub sees it; `broken` ones fail on every update."""

    def __init__(self, *, broken: bool = False) -> None:
        self.player_id: int | None = None
        self.broken = broken
        self.updates: list[live.BoardUpdate] = []

    async def board_update(self, update: live.BoardUpdate) -> None:
        if self.broken:
            raise ConnectionResetError("socket gone")
        self.updates.append(update)


async def test_the_hub_hands_one_encoded_update_to_every_socket_even_past_a_broken_one(
    settings: Any, daily: DailyDeal, caplog: pytest.LogCaptureFixture
) -> None:
    use_default_layer(settings, "channels.layers.InMemoryChannelLayer")
    hub = live.BoardHub()
    board = live.BoardKey(daily.date, "score")
    sockets = [RecordingSocket(), RecordingSocket(broken=True), RecordingSocket()]
    for socket in sockets:
        await hub.watch(board, socket)
    try:
        await hub._publish(hub._boards[board])
        first, _, last = sockets
        assert len(first.updates) == len(last.updates) == 1
        update = first.updates[0]
        assert last.updates[0] is update, "read and encoded once for every socket"
        assert json.loads(update.full_text) == {
            "type": "update",
            "date": daily.date.isoformat(),
            "order": "score",
            "version": update.version,
            "total": 0,
            "entries": [],
        }
        assert update.full_text == update.head + ',"entries":[]}'
        assert any("could not update a socket" in record.message for record in caplog.records)
    finally:
        for socket in sockets:
            hub.unwatch(board, socket)
        for task in (hub._receiver, hub._refresher):
            if task is not None:
                task.cancel()
        await database_sync_to_async(connections.close_all)()
    assert board not in hub._boards
