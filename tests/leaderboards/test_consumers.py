"""The live leaderboard socket, driven through the whole ASGI stack with `WebsocketCommunicator`.

Every test runs twice: on the in-memory channel layer, and on real Redis
(`redis` marker) when REDIS_URL is set. Those marked with `write_path` run on
both write paths of an update: through ASGI's send, and framed once by the hub
and written to the socket's transport (`easyharp_site.compat.FrameWriter`, in
production under uvicorn), here a stand-in transport that hands each frame it
takes to the communicator as the client would read it. Games go through the real services
(`attempt_start`, `game_submit`, `game_void`, `player_ban`), so updates come
from their `on_commit` hook.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import datetime
import json
import random
import threading
import time
import zlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.layers import InMemoryChannelLayer, channel_layers, get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import connections, transaction
from django.test import Client
from django.utils import timezone

from easyharp_site import sockets as site_sockets
from easyharp_site.asgi import application
from games.models import DailyDeal, Game
from games.rules import Game as Play
from games.services import attempt_assist, attempt_start
from leaderboards import live
from leaderboards.consumers import CLOSE_BAD_ORDER, CLOSE_NO_BOARD, LeaderboardConsumer
from leaderboards.routing import board_websocket_urls
from leaderboards.selectors import leaderboard_entry, leaderboard_page
from ranking.actions import game_void, player_ban, player_unban
from tests.fixtures import play_ranked, stored_game
from tests.paths import GAME_VECTORS

pytestmark = pytest.mark.django_db(transaction=True)

# Today's deal is pinned to deal 4, for which the conformance vectors hold a win.
DEAL = "EH1-N-AAAAAAE"
DEAL_NUMBER = 4
VECTORS = GAME_VECTORS
WIN_LOG: list[str] = next(
    game["log"].split()
    for game in map(json.loads, VECTORS.read_text().splitlines())
    if game["deal"] == DEAL and game.get("won")
)
# A full cycle of the stock (59 taps and a recycle) leaves the table as dealt:
# prefixed to a win, it makes a win with 60 more moves.
STOCK_CYCLE = ["S"] * 60
ORIGIN = (b"origin", b"http://testserver")
QUIET = 0.4


# --- Fixtures -----------------------------------------------------------------------


@pytest.fixture(
    params=["memory", pytest.param("redis", marks=pytest.mark.redis)],
    ids=["memory-layer", "redis-layer"],
)
def layers(request: pytest.FixtureRequest, settings: Any) -> str:
    """The channel layer of one run: in-memory, or Redis."""
    if request.param == "redis":
        default = copy.deepcopy(settings.CHANNEL_LAYERS["default"])
        assert default["BACKEND"].startswith("channels_redis.")
        # A prefix of our own, so that a flush touches nothing else (after the
        # worker's own under pytest-xdist: tests/conftest.py).
        default["CONFIG"]["prefix"] = f"{default['CONFIG'].get('prefix', 'asgi')}-test-live"
    else:
        default = {"BACKEND": "channels.layers.InMemoryChannelLayer"}
    settings.CHANNEL_LAYERS = {"default": default}
    settings.LIVE_BOARD_MAX_UPDATES_PER_SECOND = 20
    return str(request.param)


class Transport:
    """Stands in for the server's transport under `FrameWriter`: every frame written
    is parsed back (as the client's websocket library does) and handed to the
    communicator's output, after whatever the socket sent through ASGI before it.
    """

    def __init__(self, send: Callable[[dict[str, Any]], Any]) -> None:
        # The communicator's `send` is its output queue's `put`.
        self.output: asyncio.Queue[dict[str, Any]] = send.__self__  # type: ignore[attr-defined]
        self.open = True
        self.frames: list[bytes] = []

    def ready(self) -> bool:
        return self.open

    def write(self, frame: bytes) -> None:
        self.frames.append(frame)
        self.output.put_nowait({"type": "websocket.send", "text": parse_frame(frame)})


def parse_frame(frame: bytes) -> str:
    """The text of one whole, unmasked server frame, read by the websockets package."""
    from websockets.frames import Frame, Opcode
    from websockets.streams import StreamReader

    reader = StreamReader()
    reader.feed_data(frame)
    reader.feed_eof()
    parser = Frame.parse(reader.read_exact, mask=False)
    try:
        next(parser)
    except StopIteration as done:
        parsed: Frame = done.value
    assert parsed.opcode is Opcode.TEXT and parsed.fin and not parsed.rsv1
    assert reader.at_eof(), "one frame, nothing after it"
    return parsed.data.decode()


@pytest.fixture(params=["asgi", "frames"])
def write_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> list[Transport]:
    """Updates through ASGI's send, or framed and written to a transport; the transports made."""
    transports: list[Transport] = []
    if request.param == "frames":

        def writer(send: Callable[[dict[str, Any]], Any]) -> Transport:
            transports.append(Transport(send))
            return transports[-1]

        monkeypatch.setattr(site_sockets, "frame_writer", writer)
    return transports


@pytest.fixture
async def flushed(layers: str) -> AsyncIterator[None]:
    await get_channel_layer().flush()
    yield
    await get_channel_layer().flush()
    channel_layers.backends.clear()


@pytest.fixture(autouse=True)
async def _close_database_thread_connections() -> AsyncIterator[None]:
    """The sockets' reads run in Channels' database thread: close its connection
    after each test, so that the test database can be dropped at the end."""
    yield
    await database_sync_to_async(connections.close_all)()


@pytest.fixture
def today() -> datetime.date:
    return timezone.now().date()


@pytest.fixture
def daily(transactional_db: None, today: datetime.date) -> DailyDeal:
    return DailyDeal.objects.create(date=today, number=DEAL_NUMBER)


@pytest.fixture
def make_player(transactional_db: None) -> Callable[[str], AbstractBaseUser]:
    def make(username: str) -> AbstractBaseUser:
        # No password: hashing one costs a third of a second, and sockets sign in by session.
        return get_user_model().objects.create_user(username=username)

    return make


# --- Helpers ------------------------------------------------------------------------


def random_log(rng: random.Random, length: int) -> list[str]:
    """A log of up to `length` random legal actions on today's deal (an unfinished game)."""
    play = Play(DEAL)
    for _ in range(length):
        actions = [action for action in play.legal_actions() if action != "U"]
        if not actions:
            break
        play.play(rng.choice(actions))
    return play.log


def submit(player: AbstractBaseUser, log: list[str]) -> Game:
    """The player's game of today: their ranked game the first time, then practice."""
    return play_ranked(player, log)


def session_cookie(player: AbstractBaseUser) -> tuple[bytes, bytes]:
    client = Client()
    client.force_login(player)
    return (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())


async def open_socket(
    date: datetime.date | str,
    order: str = "score",
    *,
    player: AbstractBaseUser | None = None,
    origin: bytes = b"http://testserver",
) -> WebsocketCommunicator:
    headers = [(b"origin", origin), (b"host", b"testserver")]
    if player is not None:
        headers.append(await database_sync_to_async(session_cookie)(player))
    day = date.isoformat() if isinstance(date, datetime.date) else date
    return WebsocketCommunicator(
        application, f"/ws/daily/{day}/leaderboard/?order={order}", headers=headers
    )


async def connect(
    date: datetime.date, order: str = "score", *, player: AbstractBaseUser | None = None
) -> tuple[WebsocketCommunicator, dict[str, Any]]:
    """An open socket and its snapshot."""
    communicator = await open_socket(date, order, player=player)
    connected, _ = await communicator.connect()
    assert connected
    snapshot = await communicator.receive_json_from(timeout=5)
    assert snapshot["type"] == "snapshot"
    return communicator, snapshot


@contextlib.asynccontextmanager
async def sockets_open(
    date: datetime.date, count: int, *, at_once: bool = False
) -> AsyncIterator[list[WebsocketCommunicator]]:
    """`count` anonymous sockets on the day's score board, past their
    snapshots (opened one by one, or `at_once`); closed at the end."""
    if at_once:
        opened = await asyncio.gather(*(connect(date) for _ in range(count)))
    else:
        opened = [await connect(date) for _ in range(count)]
    try:
        yield [communicator for communicator, _ in opened]
    finally:
        for communicator, _ in opened:
            await communicator.disconnect()


def board_of(message: dict[str, Any]) -> dict[str, Any]:
    """What a client shows: the fields a snapshot or an update may replace."""
    return {key: message[key] for key in ("total", "entries", "me") if key in message}


def apply(board: dict[str, Any], version: int, update: dict[str, Any]) -> int:
    """Apply an update as a client does; returns the new version."""
    assert update["type"] == "update"
    assert update["version"] > version, "versions only grow"
    for key in ("total", "entries", "me"):
        if key in update:
            board[key] = update[key]
    return int(update["version"])


async def drain(
    communicator: WebsocketCommunicator, board: dict[str, Any], version: int
) -> tuple[int, int]:
    """Apply updates until the socket falls silent; returns (version, updates applied)."""
    applied = 0
    while not await communicator.receive_nothing(timeout=QUIET):
        version = apply(board, version, await communicator.receive_json_from())
        applied += 1
    return version, applied


def fresh_board(
    date: datetime.date, order: str, player: AbstractBaseUser | None = None
) -> dict[str, Any]:
    page = leaderboard_page(date=date, order=order, limit=live.WATCHED_ENTRIES)
    board = {"total": page["total"], "entries": page["entries"]}
    if player is not None:
        board["me"] = leaderboard_entry(date=date, order=order, player=player)
    return board


# --- Snapshot -----------------------------------------------------------------------


async def test_a_new_socket_gets_the_top_of_the_board_and_the_player_count(
    flushed: None, daily: DailyDeal, make_player: Callable[[str], AbstractBaseUser]
) -> None:
    def play() -> None:
        rng = random.Random(7)
        for number in range(live.WATCHED_ENTRIES + 5):
            submit(make_player(f"p{number:02}"), random_log(rng, rng.randint(1, 40)))

    await database_sync_to_async(play)()
    communicator, snapshot = await connect(daily.date)
    try:
        expected = await database_sync_to_async(fresh_board)(daily.date, "score")
        assert snapshot["date"] == daily.date.isoformat()
        assert snapshot["order"] == "score"
        assert snapshot["deal"] == DEAL
        assert snapshot["total"] == live.WATCHED_ENTRIES + 5
        assert len(snapshot["entries"]) == live.WATCHED_ENTRIES
        assert board_of(snapshot) == expected
        assert "me" not in snapshot
        assert await communicator.receive_nothing(timeout=QUIET)
    finally:
        await communicator.disconnect()


async def test_a_signed_in_player_gets_their_own_entry_and_rank(
    flushed: None, daily: DailyDeal, make_player: Callable[[str], AbstractBaseUser]
) -> None:
    alice, bob = await database_sync_to_async(lambda: (make_player("alice"), make_player("bob")))()
    await database_sync_to_async(submit)(alice, WIN_LOG)
    await database_sync_to_async(submit)(bob, ["S"])

    communicator, snapshot = await connect(daily.date, player=bob)
    stranger, stranger_snapshot = await connect(
        daily.date, player=await database_sync_to_async(make_player)("carol")
    )
    try:
        assert snapshot["me"]["player"] == "bob"
        assert snapshot["me"]["rank"] == 2
        assert stranger_snapshot["me"] is None
    finally:
        await communicator.disconnect()
        await stranger.disconnect()


async def test_a_win_scoring_less_than_a_loss_is_sent_above_it(
    flushed: None, daily: DailyDeal, make_player: Callable[[str], AbstractBaseUser]
) -> None:
    lou, pat = await database_sync_to_async(lambda: (make_player("lou"), make_player("pat")))()
    # lou stopped one card short with 1,300; pat then wins at par with 1,280.
    await database_sync_to_async(stored_game)(
        player=lou, daily=daily, score=1300, moves=160, announce=True
    )
    communicator, snapshot = await connect(daily.date, player=lou)
    try:
        assert snapshot["me"]["rank"] == 1
        await database_sync_to_async(stored_game)(
            player=pat, daily=daily, score=1280, moves=170, won=True, announce=True
        )
        board, version = board_of(snapshot), snapshot["version"]
        version = apply(board, version, await communicator.receive_json_from(timeout=5))
        await drain(communicator, board, version)
        assert [(e["rank"], e["player"], e["won"]) for e in board["entries"]] == [
            (1, "pat", True),
            (2, "lou", False),
        ]
        assert board["me"]["rank"] == 2 and board["total"] == 2
    finally:
        await communicator.disconnect()


# --- Updates ------------------------------------------------------------------------


async def test_a_submission_reaches_the_socket_only_after_its_transaction_commits(
    write_path: list[Transport],
    flushed: None,
    daily: DailyDeal,
    make_player: Callable[[str], AbstractBaseUser],
) -> None:
    alice = await database_sync_to_async(make_player)("alice")
    communicator, snapshot = await connect(daily.date)
    try:
        assert snapshot["total"] == 0

        stored: list[Game] = []

        def submit_and_listen_before_commit() -> bool:
            with transaction.atomic():
                stored.append(submit(alice, WIN_LOG))
                return async_to_sync(communicator.receive_nothing)(timeout=QUIET)

        assert await database_sync_to_async(submit_and_listen_before_commit)()
        update = await communicator.receive_json_from(timeout=5)
        assert update["type"] == "update"
        assert update["version"] > snapshot["version"]
        assert update["total"] == 1
        assert [entry["player"] for entry in update["entries"]] == ["alice"]
        assert update["entries"][0]["won"] is True
        # The duration the server measured travels with the entry.
        assert update["entries"][0]["duration_ms"] == stored[0].duration_ms is not None
    finally:
        await communicator.disconnect()


async def test_a_rolled_back_submission_sends_nothing(
    flushed: None, daily: DailyDeal, make_player: Callable[[str], AbstractBaseUser]
) -> None:
    alice = await database_sync_to_async(make_player)("alice")
    communicator, _ = await connect(daily.date)
    try:

        def submit_then_roll_back() -> None:
            with transaction.atomic():
                submit(alice, WIN_LOG)
                transaction.set_rollback(True)

        await database_sync_to_async(submit_then_roll_back)()
        assert await communicator.receive_nothing(timeout=QUIET)
    finally:
        await communicator.disconnect()


async def test_a_newcomer_below_the_top_of_the_board_sends_anonymous_watchers_only_the_total(
    write_path: list[Transport],
    flushed: None,
    daily: DailyDeal,
    make_player: Callable[[str], AbstractBaseUser],
) -> None:
    """The top 50 stand still: anonymous watchers get the new player count and
    no entries; the newcomer's own socket gets their entry and rank."""

    def play() -> AbstractBaseUser:
        for number in range(live.WATCHED_ENTRIES):
            submit(make_player(f"p{number:02}"), WIN_LOG)
        return make_player("last")

    last = await database_sync_to_async(play)()
    communicator, snapshot = await connect(daily.date)
    watcher, watcher_snapshot = await connect(daily.date, player=last)
    try:
        assert watcher_snapshot["me"] is None
        game = await database_sync_to_async(submit)(last, ["S"])
        moved = await database_sync_to_async(fresh_board)(daily.date, "score", last)
        assert (moved["me"]["game"], moved["me"]["rank"]) == (game.pk, live.WATCHED_ENTRIES + 1)
        assert moved["entries"] == snapshot["entries"]
        update = await communicator.receive_json_from(timeout=5)
        assert "entries" not in update
        assert update["total"] == snapshot["total"] + 1
        assert await communicator.receive_nothing(timeout=QUIET)
        # The player's own socket sees their new entry, and nothing else changed.
        own = await watcher.receive_json_from(timeout=5)
        assert own["me"] == moved["me"]
        assert "entries" not in own
        assert own["total"] == snapshot["total"] + 1
    finally:
        await communicator.disconnect()
        await watcher.disconnect()


async def test_a_practice_game_sends_nothing(
    flushed: None, daily: DailyDeal, make_player: Callable[[str], AbstractBaseUser]
) -> None:
    alice = await database_sync_to_async(make_player)("alice")
    await database_sync_to_async(submit)(alice, ["S"])
    communicator, _ = await connect(daily.date, player=alice)
    moves_socket, _ = await connect(daily.date, "moves")
    try:
        practice = await database_sync_to_async(submit)(alice, WIN_LOG)
        assert not practice.ranked
        assert await communicator.receive_nothing(timeout=QUIET)
        assert await moves_socket.receive_nothing(timeout=QUIET)
    finally:
        await communicator.disconnect()
        await moves_socket.disconnect()


async def test_a_voided_game_leaves_the_board_of_every_watcher(
    flushed: None, daily: DailyDeal, make_player: Callable[[str], AbstractBaseUser]
) -> None:
    alice, bob = await database_sync_to_async(lambda: (make_player("alice"), make_player("bob")))()
    win = await database_sync_to_async(submit)(alice, WIN_LOG)
    await database_sync_to_async(submit)(bob, STOCK_CYCLE + WIN_LOG)
    by_moves, moves_snapshot = await connect(daily.date, "moves")
    by_score, score_snapshot = await connect(daily.date, "score")
    try:
        assert [entry["player"] for entry in moves_snapshot["entries"]] == ["alice", "bob"]
        await database_sync_to_async(game_void)(game=win, reason="test")
        for communicator in (by_moves, by_score):
            update = await communicator.receive_json_from(timeout=5)
            assert update["total"] == 1
            assert [entry["player"] for entry in update["entries"]] == ["bob"]
            assert update["entries"][0]["rank"] == 1
    finally:
        await by_moves.disconnect()
        await by_score.disconnect()


async def test_a_burst_is_coalesced_and_the_last_update_carries_the_latest_board(
    write_path: list[Transport],
    flushed: None,
    daily: DailyDeal,
    make_player: Callable[[str], AbstractBaseUser],
    settings: Any,
) -> None:
    settings.LIVE_BOARD_MAX_UPDATES_PER_SECOND = 2
    players = await database_sync_to_async(lambda: [make_player(f"p{n}") for n in range(12)])()
    communicator, snapshot = await connect(daily.date)
    board, version = board_of(snapshot), snapshot["version"]
    try:
        started = time.monotonic()
        rng = random.Random(11)
        for player in players:
            await database_sync_to_async(submit)(player, random_log(rng, rng.randint(1, 30)))
        elapsed = time.monotonic() - started
        applied = 0
        while not await communicator.receive_nothing(timeout=1.5):
            version = apply(board, version, await communicator.receive_json_from())
            applied += 1
        # At most 2 a second, plus the leading and the trailing edge.
        assert 1 <= applied <= int(elapsed * 2) + 2 < len(players)
        assert board == await database_sync_to_async(fresh_board)(daily.date, "score")
    finally:
        await communicator.disconnect()


async def test_a_snapshot_plus_its_updates_equals_a_fresh_snapshot(
    write_path: list[Transport],
    flushed: None,
    daily: DailyDeal,
    make_player: Callable[[str], AbstractBaseUser],
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    """Random ranked and practice games, assisted attempts, voids, bans and lifted
    bans, watched on both boards through a small window.

    The window is cut to 3 entries so that players move in and out of it. The
    watched player is never banned: a ban closes their socket
    (tests/security/test_socket_sessions.py). Each write path and channel layer
    plays a sequence of its own (seeded by their names), the same on every run.
    """
    monkeypatch.setattr(live, "WATCHED_ENTRIES", 3)
    rng = random.Random(zlib.crc32(request.node.callspec.id.encode()))
    players = await database_sync_to_async(lambda: [make_player(f"p{n}") for n in range(7)])()
    watched = players[0]
    sockets = []
    for order in ("score", "moves"):
        for player in (None, watched):
            communicator, snapshot = await connect(daily.date, order, player=player)
            sockets.append((communicator, order, player, board_of(snapshot), snapshot["version"]))
    try:
        stored: list[Game] = []
        moderator = await database_sync_to_async(make_player)("moderator")
        for _ in range(30):
            roll = rng.random()
            player = rng.choice(players)
            if stored and roll < 0.15:
                game = stored.pop(rng.randrange(len(stored)))
                await database_sync_to_async(game_void)(game=game, reason="random")
            elif roll < 0.3 and player is not watched:
                act = player_ban if player.is_active else player_unban
                await database_sync_to_async(act)(player=player, moderator=moderator, reason="r")
            elif player.is_active:
                if roll < 0.55:
                    log = STOCK_CYCLE * rng.randint(0, 2) + WIN_LOG
                else:
                    log = random_log(rng, rng.randint(1, 60))
                if roll > 0.9:
                    # A hint during the attempt: the game is stored, on no board.
                    await database_sync_to_async(attempt_start)(player=player, date=daily.date)
                    await database_sync_to_async(attempt_assist)(player=player, deal=DEAL)
                stored.append(await database_sync_to_async(submit)(player, log))
            if rng.random() < 0.3:
                # Let some updates out between changes, not only at the end.
                await database_sync_to_async(time.sleep)(rng.random() * 0.1)

        for index, (communicator, order, player, board, version) in enumerate(sockets):
            version, _ = await drain(communicator, board, version)
            sockets[index] = (communicator, order, player, board, version)
        for _, order, player, board, _ in sockets:
            expected = await database_sync_to_async(fresh_board)(daily.date, order, player)
            assert board == expected, (order, player)
            # A new socket's snapshot agrees too.
            fresh_socket, fresh_snapshot = await connect(daily.date, order, player=player)
            await fresh_socket.disconnect()
            assert board_of(fresh_snapshot) == board
    finally:
        for communicator, *_ in sockets:
            await communicator.disconnect()


async def test_sockets_that_connect_at_the_same_moment_all_get_updates(
    flushed: None, daily: DailyDeal, make_player: Callable[[str], AbstractBaseUser]
) -> None:
    alice = await database_sync_to_async(make_player)("alice")
    async with sockets_open(daily.date, 8, at_once=True) as sockets:
        await database_sync_to_async(submit)(alice, WIN_LOG)
        for communicator in sockets:
            update = await communicator.receive_json_from(timeout=5)
            assert update["total"] == 1


async def test_every_anonymous_watcher_gets_the_same_update_made_once(
    write_path: list[Transport],
    flushed: None,
    daily: DailyDeal,
    make_player: Callable[[str], AbstractBaseUser],
) -> None:
    alice = await database_sync_to_async(make_player)("alice")
    async with sockets_open(daily.date, 3) as sockets:
        await database_sync_to_async(submit)(alice, WIN_LOG)
        texts = [await communicator.receive_from(timeout=5) for communicator in sockets]
    assert json.loads(texts[0])["total"] == 1
    assert texts == [texts[0]] * 3
    if write_path:
        # The snapshots went through ASGI; the update is one frame, written to each.
        assert [len(transport.frames) for transport in write_path] == [1, 1, 1]
        handed = [transport.frames[0] for transport in write_path]
    else:
        handed = texts
    # Not equal copies: the very same object, handed to every socket.
    assert all(item is handed[0] for item in handed)


@pytest.mark.parametrize("write_path", ["frames"], indirect=True)
async def test_a_socket_whose_reader_is_behind_gets_the_newest_board_and_holds_up_no_other(
    write_path: list[Transport],
    flushed: None,
    daily: DailyDeal,
    make_player: Callable[[str], AbstractBaseUser],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A transport above its high-water mark takes no frame: the socket's update
    waits in a task of its own for the server's send (which waits for the
    transport to drain), newer ones replace it meanwhile, and the other sockets
    are written to at once."""
    players = await database_sync_to_async(lambda: [make_player(f"p{n}") for n in range(4)])()
    slow, _ = await connect(daily.date)
    quick, _ = await connect(daily.date)
    slow_transport, quick_transport = write_path
    drained = asyncio.Event()
    send = LeaderboardConsumer.send

    async def send_when_drained(self: LeaderboardConsumer, text_data: str) -> None:
        if self.writer is slow_transport:
            await drained.wait()
        await send(self, text_data=text_data)

    monkeypatch.setattr(LeaderboardConsumer, "send", send_when_drained)
    slow_transport.open = False
    try:
        for total, player in enumerate(players[:3], start=1):
            await database_sync_to_async(submit)(player, WIN_LOG if total == 1 else ["S"])
            assert (await quick.receive_json_from(timeout=5))["total"] == total
        assert await slow.receive_nothing(timeout=QUIET)
        assert slow_transport.frames == [] and len(quick_transport.frames) == 3

        slow_transport.open = True
        drained.set()
        # The update it held when the reader fell behind, then the newest.
        board: dict[str, Any] = {}
        version, applied = await drain(slow, board, 0)
        assert applied == 2 and board["total"] == 3
        assert slow_transport.frames == []

        # Caught up: written to directly again.
        await database_sync_to_async(submit)(players[3], ["S"])
        apply(board, version, await slow.receive_json_from(timeout=5))
        assert board["total"] == 4 and len(slow_transport.frames) == 1
        expected = await database_sync_to_async(fresh_board)(daily.date, "score")
        assert board["entries"] == expected["entries"]
    finally:
        await slow.disconnect()
        await quick.disconnect()


async def test_signed_in_watchers_get_their_new_ranks_from_one_read_for_all(
    write_path: list[Transport],
    flushed: None,
    daily: DailyDeal,
    make_player: Callable[[str], AbstractBaseUser],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A newcomer goes to the top: every signed-in watcher moves down one, read at once."""

    def play() -> list[AbstractBaseUser]:
        players = [make_player(f"w{n}") for n in range(4)]
        for player in players:
            submit(player, ["S"])
        return players

    watchers = await database_sync_to_async(play)()
    opened = [await connect(daily.date, player=player) for player in watchers]
    calls: list[set[int]] = []
    read_entries = live.leaderboard_entries_of

    def counted(**kwargs: Any) -> dict[int, dict[str, Any]]:
        calls.append(set(kwargs["player_ids"]))
        return read_entries(**kwargs)

    monkeypatch.setattr(live, "leaderboard_entries_of", counted)
    try:
        newcomer = await database_sync_to_async(make_player)("newcomer")
        await database_sync_to_async(submit)(newcomer, WIN_LOG)
        for (communicator, snapshot), player in zip(opened, watchers, strict=True):
            update = await communicator.receive_json_from(timeout=5)
            assert update["me"]["player"] == player.username
            assert update["me"]["rank"] == snapshot["me"]["rank"] + 1
            assert update["me"] == await database_sync_to_async(leaderboard_entry)(
                date=daily.date, order="score", player=player
            )
        # One read of the watchers' entries for all of them per change read (the
        # games played before the sockets opened may be read once more: their
        # announcement leaves after a gathering), never one per watcher.
        assert calls and all(call == {player.pk for player in watchers} for call in calls)
    finally:
        for communicator, _ in opened:
            await communicator.disconnect()


async def test_an_update_that_comes_while_the_snapshot_is_sent_follows_it(
    write_path: list[Transport],
    flushed: None,
    daily: DailyDeal,
    make_player: Callable[[str], AbstractBaseUser],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The socket watches the board before it reads the snapshot: an update can
    reach it in between, and must neither overtake the snapshot nor be lost."""
    alice = await database_sync_to_async(make_player)("alice")
    board = live.BoardKey(daily.date, "score")
    send = LeaderboardConsumer.send

    async def send_after_a_change(self: LeaderboardConsumer, text_data: str) -> None:
        if json.loads(text_data)["type"] == "snapshot":
            # A game lands and the hub publishes it before the snapshot goes out.
            await database_sync_to_async(submit)(alice, WIN_LOG)
            hub = live.BoardHub.current()
            await hub._publish(hub._boards[board])
        await send(self, text_data=text_data)

    monkeypatch.setattr(LeaderboardConsumer, "send", send_after_a_change)
    communicator, snapshot = await connect(daily.date)
    try:
        assert snapshot["total"] == 0
        update = await communicator.receive_json_from(timeout=5)
        assert update["version"] > snapshot["version"]
        assert update["total"] == 1
        assert [entry["player"] for entry in update["entries"]] == ["alice"]
    finally:
        await communicator.disconnect()


async def test_a_socket_that_left_gets_no_more_updates_and_its_board_is_released(
    flushed: None, daily: DailyDeal, make_player: Callable[[str], AbstractBaseUser]
) -> None:
    communicator, _ = await connect(daily.date)
    board = live.BoardKey(daily.date, "score")
    assert len(live.BoardHub.current()._boards[board].sockets) == 1
    await communicator.disconnect()
    assert board not in live.BoardHub.current()._boards
    # A change now reads nothing and sends nothing (and raises nothing).
    alice = await database_sync_to_async(make_player)("alice")
    await database_sync_to_async(submit)(alice, WIN_LOG)


# --- Leaving the hub, however the socket ends ------------------------------------------


def watching(board: live.BoardKey) -> int:
    """How many sockets this process's hub holds for `board`."""
    state = live.BoardHub.current()._boards.get(board)
    return 0 if state is None else len(state.sockets)


@pytest.fixture
def held_snapshots(
    monkeypatch: pytest.MonkeyPatch, board_reads: list[live.BoardKey]
) -> tuple[asyncio.Event, list[live.BoardKey]]:
    """Hold every board read at a gate (a busy database); the reads that run."""
    gate = asyncio.Event()
    read = live.BoardHub.read

    async def held(self: live.BoardHub, *args: Any, **kwargs: Any) -> live.BoardView:
        await gate.wait()
        return await read(self, *args, **kwargs)

    monkeypatch.setattr(live.BoardHub, "read", held)
    return gate, board_reads


async def until(condition: Callable[[], bool]) -> None:
    """Let the event loop run until `condition` holds (a few seconds at most)."""
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.01)


async def test_sockets_closed_while_their_snapshot_is_read_leave_the_hub_at_once(
    flushed: None, daily: DailyDeal, held_snapshots: tuple[asyncio.Event, list[live.BoardKey]]
) -> None:
    """Many sockets close during connect: each consumer ends by itself, out of the hub,
    and the snapshot reads they were waiting for never run."""
    gate, reads = held_snapshots
    board = live.BoardKey(daily.date, "score")
    sockets = [await open_socket(daily.date) for _ in range(100)]
    for communicator in sockets:
        connected, _ = await communicator.connect()
        assert connected
    await until(lambda: watching(board) == len(sockets))
    assert watching(board) == len(sockets), "every socket is waiting for its snapshot"

    await asyncio.gather(*(communicator.disconnect() for communicator in sockets))

    # Ended by the close, not cancelled by the communicator's timeout (as
    # daphne kills a consumer that takes too long to shut down).
    assert not any(communicator.future.cancelled() for communicator in sockets)
    assert watching(board) == 0
    assert board not in live.BoardHub.current()._boards
    gate.set()
    await asyncio.sleep(QUIET)
    assert reads == [], "no snapshot read outlives its socket"


async def test_a_client_message_sent_during_the_connect_is_answered_after_the_snapshot(
    flushed: None, daily: DailyDeal, held_snapshots: tuple[asyncio.Event, list[live.BoardKey]]
) -> None:
    gate, _ = held_snapshots
    communicator = await open_socket(daily.date)
    connected, _ = await communicator.connect()
    assert connected
    try:
        await communicator.send_json_to({"type": "ping"})
        assert await communicator.receive_nothing(timeout=QUIET)
        gate.set()
        assert (await communicator.receive_json_from(timeout=5))["type"] == "snapshot"
        assert await communicator.receive_json_from(timeout=5) == {"type": "pong"}
    finally:
        await communicator.disconnect()


async def test_a_cancelled_consumer_leaves_the_hub(flushed: None, daily: DailyDeal) -> None:
    board = live.BoardKey(daily.date, "score")
    communicator, _ = await connect(daily.date)
    assert watching(board) == 1
    communicator.future.cancel()
    with pytest.raises(asyncio.CancelledError):
        await communicator.future
    assert watching(board) == 0
    assert board not in live.BoardHub.current()._boards


async def test_a_consumer_cancelled_during_its_snapshot_read_leaves_the_hub(
    flushed: None, daily: DailyDeal, held_snapshots: tuple[asyncio.Event, list[live.BoardKey]]
) -> None:
    gate, reads = held_snapshots
    board = live.BoardKey(daily.date, "score")
    communicator = await open_socket(daily.date)
    connected, _ = await communicator.connect()
    assert connected
    await until(lambda: watching(board) == 1)
    assert watching(board) == 1
    communicator.future.cancel()
    with pytest.raises(asyncio.CancelledError):
        await communicator.future
    assert watching(board) == 0
    gate.set()
    await asyncio.sleep(QUIET)
    assert reads == []


async def test_a_consumer_that_fails_leaves_the_hub(
    flushed: None, daily: DailyDeal, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = live.BoardKey(daily.date, "score")

    async def broken(self: LeaderboardConsumer) -> None:
        assert watching(board) == 1
        raise RuntimeError("the snapshot could not be sent")

    monkeypatch.setattr(LeaderboardConsumer, "_send_snapshot", broken)
    communicator = await open_socket(daily.date)
    connected, _ = await communicator.connect()
    assert connected
    with pytest.raises(RuntimeError, match="could not be sent"):
        await communicator.wait(timeout=5)
    assert watching(board) == 0


# --- Refusals -----------------------------------------------------------------------


async def test_a_page_from_another_origin_cannot_open_the_socket(
    flushed: None, daily: DailyDeal
) -> None:
    communicator = await open_socket(daily.date, origin=b"https://evil.example")
    connected, _ = await communicator.connect()
    assert not connected
    await communicator.disconnect()


@pytest.mark.parametrize(
    ("day", "order", "code"),
    [
        ("tomorrow", "score", CLOSE_NO_BOARD),
        ("2026-02-30", "score", CLOSE_NO_BOARD),
        ("yesterday-ish", "score", CLOSE_NO_BOARD),
        ("1999-01-01", "score", CLOSE_NO_BOARD),
        ("today", "fastest", CLOSE_BAD_ORDER),
    ],
)
async def test_a_date_without_a_board_closes_the_socket_with_a_clear_code(
    flushed: None, daily: DailyDeal, day: str, order: str, code: int
) -> None:
    dates = {"today": daily.date, "tomorrow": daily.date + datetime.timedelta(days=1)}
    communicator = await open_socket(dates.get(day, day), order)
    connected, _ = await communicator.connect()
    assert connected, "accepted first, so that the close code reaches the browser"
    error = await communicator.receive_json_from(timeout=5)
    assert error["type"] == "error"
    assert error["error"]["code"] in {"no_board", "bad_order"}
    closing = await communicator.receive_output(timeout=5)
    assert closing["type"] == "websocket.close"
    assert closing["code"] == code
    await communicator.disconnect()


async def test_bad_client_messages_get_an_error_and_the_socket_stays_open(
    flushed: None, daily: DailyDeal, make_player: Callable[[str], AbstractBaseUser], settings: Any
) -> None:
    communicator, _ = await connect(daily.date)
    try:
        too_large = "x" * (settings.LIVE_CLIENT_MESSAGE_MAX_BYTES + 1)
        bad = [
            ({"text_data": "not json {"}, "invalid_json"),
            ({"text_data": too_large}, "message_too_large"),
            ({"text_data": "[" * 2000 + "]" * 2000}, "message_too_large"),
            ({"text_data": '{"type": "subscribe", "order": "moves"}'}, "unknown_message"),
            ({"text_data": "[1, 2]"}, "unknown_message"),
            ({"text_data": "null"}, "unknown_message"),
            ({"bytes_data": b"\x00\x01"}, "binary_not_supported"),
        ]
        for frame, code in bad:
            await communicator.send_to(**frame)
            error = await communicator.receive_json_from(timeout=5)
            assert error["type"] == "error"
            assert error["error"]["code"] == code
            assert error["error"]["message"]
        await communicator.send_json_to({"type": "ping"})
        assert await communicator.receive_json_from(timeout=5) == {"type": "pong"}
        # Still watching: a submission still arrives.
        alice = await database_sync_to_async(make_player)("alice")
        await database_sync_to_async(submit)(alice, WIN_LOG)
        update = await communicator.receive_json_from(timeout=5)
        assert update["total"] == 1
    finally:
        await communicator.disconnect()


async def test_nested_json_within_the_size_limit_is_answered_not_crashed_on(
    flushed: None, daily: DailyDeal, settings: Any
) -> None:
    settings.LIVE_CLIENT_MESSAGE_MAX_BYTES = 100_000
    communicator, _ = await connect(daily.date)
    try:
        await communicator.send_to(text_data="[" * 50_000 + "]" * 50_000)
        error = await communicator.receive_json_from(timeout=5)
        assert error["error"]["code"] in {"invalid_json", "unknown_message"}
        await communicator.send_json_to({"type": "ping"})
        assert await communicator.receive_json_from(timeout=5) == {"type": "pong"}
    finally:
        await communicator.disconnect()


# --- Outages ------------------------------------------------------------------------


class FlakyLayer(InMemoryChannelLayer):
    """An in-memory layer that can go down and come back like a restarted Redis.

    While down, every call fails with ConnectionError, and a receive that was
    waiting fails too; coming back, it has forgotten every group (no persistence).
    """

    OUTAGE = {"type": "test.outage"}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.down = False

    def _check(self) -> None:
        if self.down:
            raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    async def new_channel(self, prefix: str = "specific.") -> str:
        self._check()
        return await super().new_channel(prefix)

    async def go_down(self) -> None:
        self.down = True
        for channel in list(self.channels):
            self.channels[channel].put_nowait((time.time() + 60, self.OUTAGE))
        self.groups = {}

    async def receive(self, channel: str) -> dict[str, Any]:
        self._check()
        message = await super().receive(channel)
        if message == self.OUTAGE:
            raise ConnectionError("Connection closed by server.")
        return message

    async def group_add(self, group: str, channel: str) -> None:
        self._check()
        await super().group_add(group, channel)

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        self._check()
        await super().group_send(group, message)


async def test_live_updates_resume_when_the_channel_layer_is_back(
    daily: DailyDeal, make_player: Callable[[str], AbstractBaseUser], settings: Any
) -> None:
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "tests.leaderboards.test_consumers.FlakyLayer"},
    }
    settings.LIVE_BOARD_MAX_UPDATES_PER_SECOND = 20
    alice, bob = await database_sync_to_async(lambda: (make_player("alice"), make_player("bob")))()
    layer = get_channel_layer()
    communicator, snapshot = await connect(daily.date)
    try:
        await layer.go_down()
        # Stored although nobody can be told; the socket keeps its (stale) board.
        game = await database_sync_to_async(submit)(alice, WIN_LOG)
        assert await database_sync_to_async(Game.objects.filter(pk=game.pk).exists)()
        assert await communicator.receive_nothing(timeout=QUIET)

        layer.down = False
        # The hub rejoins its groups and refreshes its boards: the change made
        # during the outage arrives without any new change.
        update = await communicator.receive_json_from(timeout=10)
        assert update["total"] == 1
        assert [entry["player"] for entry in update["entries"]] == ["alice"]
        # And the next change is announced as usual.
        await database_sync_to_async(submit)(bob, ["S"])
        update = await communicator.receive_json_from(timeout=5)
        assert update["total"] == 2
        assert update["version"] > snapshot["version"]
    finally:
        await communicator.disconnect()
        channel_layers.backends.clear()


async def test_a_socket_opened_while_the_channel_layer_is_down_gets_updates_once_it_is_back(
    daily: DailyDeal, make_player: Callable[[str], AbstractBaseUser], settings: Any
) -> None:
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "tests.leaderboards.test_consumers.FlakyLayer"},
    }
    settings.LIVE_BOARD_MAX_UPDATES_PER_SECOND = 20
    alice = await database_sync_to_async(make_player)("alice")
    await get_channel_layer().go_down()
    communicator, snapshot = await connect(daily.date)
    try:
        assert snapshot["total"] == 0, "the snapshot is served during the outage"
        get_channel_layer().down = False
        # Once the hub has its channel and groups back, changes arrive again.
        for _ in range(50):
            if live.BoardHub.current()._channel is not None:
                break
            await database_sync_to_async(time.sleep)(0.1)
        assert await communicator.receive_nothing(timeout=QUIET)
        await database_sync_to_async(submit)(alice, WIN_LOG)
        update = await communicator.receive_json_from(timeout=5)
        assert update["total"] == 1
    finally:
        await communicator.disconnect()
        channel_layers.backends.clear()


async def test_the_snapshot_says_whether_the_days_replays_are_locked_for_the_viewer(
    flushed: None, daily: DailyDeal, make_player: Callable[[str], AbstractBaseUser]
) -> None:
    alice = await database_sync_to_async(make_player)("alice")
    bob = await database_sync_to_async(make_player)("bob")
    await database_sync_to_async(submit)(alice, WIN_LOG)

    anonymous, seen_by_anyone = await connect(daily.date)
    waiting, seen_by_bob = await connect(daily.date, player=bob)
    await database_sync_to_async(submit)(bob, WIN_LOG[:10])
    played, seen_after_playing = await connect(daily.date, player=bob)
    owner, seen_by_alice = await connect(daily.date, player=alice)
    for communicator in (anonymous, waiting, played, owner):
        await communicator.disconnect()

    assert seen_by_anyone["replays_locked"] is seen_by_bob["replays_locked"] is True
    assert seen_after_playing["replays_locked"] is seen_by_alice["replays_locked"] is False


@contextlib.asynccontextmanager
async def database_thread_busy() -> AsyncIterator[None]:
    """Channels' database thread held until the block ends: reads asked meanwhile wait."""
    busy, gate, loop = asyncio.Event(), threading.Event(), asyncio.get_running_loop()

    def hold() -> None:
        loop.call_soon_threadsafe(busy.set)
        gate.wait(10)

    holder = asyncio.create_task(database_sync_to_async(hold)())
    await busy.wait()
    try:
        yield
    finally:
        gate.set()
        await holder


class _Watcher:
    player_id: int | None = None

    async def board_update(self, update: live.BoardUpdate) -> None:
        pass


async def test_snapshots_asked_before_a_read_begins_share_it_and_later_ones_read_again(
    flushed: None,
    daily: DailyDeal,
    make_player: Callable[[str], AbstractBaseUser],
    board_reads: list[live.BoardKey],
) -> None:
    reads = board_reads
    alice = await database_sync_to_async(make_player)("alice")
    hub, board, watcher = live.BoardHub.current(), live.BoardKey(daily.date, "score"), _Watcher()
    await hub.watch(board, watcher)
    try:
        # The database thread is busy: three snapshots asked meanwhile wait for one read.
        async with database_thread_busy():
            shared = [asyncio.create_task(hub.read(board, share=True)) for _ in range(3)]
            await asyncio.sleep(0)  # each has asked: nothing in `read` waits before it
        views = await asyncio.gather(*shared)
        assert len(reads) == 1
        assert all(view is views[0] for view in views)
        assert views[0].total == 0
        # A snapshot asked once that read has begun reads again: it holds what came since.
        await database_sync_to_async(submit)(alice, WIN_LOG)
        later = await hub.read(board, share=True)
        assert len(reads) == 2
        assert later.total == 1
        assert later.version > views[0].version
    finally:
        hub.unwatch(board, watcher)


async def test_connect_reads_asked_before_one_begins_share_it_and_later_ones_read_again() -> None:
    """A restart sends every socket back at once: the connect reads asked while the
    database thread is busy are one read; one asked after that read began reads again."""
    hub = live.BoardHub.current()
    calls: list[datetime.date] = []

    def read(date: datetime.date) -> list[datetime.date]:
        calls.append(date)
        return list(calls)

    day = datetime.date(2026, 1, 2)
    async with database_thread_busy():
        asked = [asyncio.create_task(hub.connect_read(read, day)) for _ in range(3)]
        other_day = asyncio.create_task(hub.connect_read(read, day + datetime.timedelta(days=1)))
        await asyncio.sleep(0)  # each has asked: nothing in `connect_read` waits before it
    shared = await asyncio.gather(*asked)
    assert shared == [[day]] * 3
    assert await other_day == [day, day + datetime.timedelta(days=1)]
    assert await hub.connect_read(read, day) == [day, day + datetime.timedelta(days=1), day]


async def test_anonymous_sockets_read_the_day_through_the_shared_connect_read(
    flushed: None,
    daily: DailyDeal,
    make_player: Callable[[str], AbstractBaseUser],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[tuple[Any, ...]] = []
    connect_read = live.BoardHub.connect_read

    async def counted(hub: live.BoardHub, *args: Any) -> Any:
        asked.append(args[1:])
        return await connect_read(hub, *args)

    monkeypatch.setattr(live.BoardHub, "connect_read", counted)
    player = await database_sync_to_async(make_player)("alice")
    opened = await asyncio.gather(*(connect(daily.date) for _ in range(3)))
    signed_in, mine = await connect(daily.date, player=player)
    assert asked == [(daily.date, None, None)] * 3  # the signed-in socket reads alone
    assert all(snapshot["replays_locked"] is True for _, snapshot in opened)
    assert mine["replays_locked"] is True
    for communicator in [signed_in, *(communicator for communicator, _ in opened)]:
        await communicator.disconnect()


async def test_a_shared_connect_read_that_fails_fails_every_socket_that_shared_it() -> None:
    hub = live.BoardHub.current()
    calls: list[datetime.date] = []

    def failing(date: datetime.date) -> None:
        calls.append(date)
        raise RuntimeError(f"no database for {date}")

    day = datetime.date(2026, 1, 2)
    async with database_thread_busy():
        asked = [asyncio.create_task(hub.connect_read(failing, day)) for _ in range(2)]
        await asyncio.sleep(0)
    results = await asyncio.gather(*asked, return_exceptions=True)
    assert calls == [day]
    assert [str(result) for result in results] == ["no database for 2026-01-02"] * 2
    assert hub._connect_reads == {}  # nothing kept once done


async def test_the_boards_without_the_leagues_wiring_refuse_a_friends_socket(
    flushed: None, daily: DailyDeal, make_player: Callable[[str], AbstractBaseUser]
) -> None:
    """Who a player's friends are is the leagues' to say: a board socket built without
    that read (`board_websocket_urls()`) refuses `scope=friends` as an unknown scope."""
    player = await database_sync_to_async(make_player)("alice")
    unwired = AuthMiddlewareStack(URLRouter(board_websocket_urls()))
    cookie = await database_sync_to_async(session_cookie)(player)
    communicator = WebsocketCommunicator(
        unwired,
        f"/ws/daily/{daily.date.isoformat()}/leaderboard/?scope=friends",
        headers=[(b"host", b"testserver"), cookie],
    )
    connected, _ = await communicator.connect()
    assert connected
    error = await communicator.receive_json_from(timeout=5)
    assert error["error"]["code"] == "bad_scope"
    closing = await communicator.receive_output(timeout=5)
    assert closing["code"] == CLOSE_BAD_ORDER
    await communicator.disconnect()
