"""Live leaderboards: announce committed board changes and keep each process's sockets current.

The path of a change, from the service layer to the sockets:

1. A service stores or voids a game and, in `transaction.on_commit`, calls
   `board_changed(date=..., orders=..., players=...)`. A server process gathers
   the changes its requests hand on for `GATHER_SECONDS`, then sends
   one tiny `board.changed` message per board to the board's group on the
   default channel layer (Redis in production), naming every player who moved.
   It never raises into the caller: a Redis outage is logged and the
   submission stands.
2. In every server process, one `BoardHub` (per event loop) is the only member
   of that group for the boards its sockets watch, so a change costs one Redis
   message per process, not one per socket (with the pub/sub layer, a single
   PUBLISH). It also re-reads its boards every LIVE_BOARD_REFRESH_SECONDS, so a
   lost announcement cannot leave a socket stale for longer.
3. The hub coalesces per board with a trailing-edge throttle: at most
   `LIVE_BOARD_MAX_UPDATES_PER_SECOND` reads per board and process, and every
   change is followed, within one interval, by a read that started after the
   change arrived. It reads the top of the board once and encodes the `update`
   message once (a `BoardUpdate`), then hands it to each of its sockets
   directly: they live in the same event loop, so a channel layer between them
   would only add a queue, a task wake-up and a dispatch per socket.
4. Each socket (`leaderboards.consumers.LeaderboardConsumer`) sends the shared
   text frame, or a smaller one when only some fields changed for it.

A board narrowed to an audience (`leaderboards.audiences`: a player's friends,
a league) is watched like the day's board it narrows, on that board's group:
the announcement names the players whose entries moved, and the hub re-reads a
narrowed board only when one of them is in its audience, so a change costs
one read per narrowed board it concerns, however many other audiences a
process watches. Each socket of a narrowed board sees only its own board; no
message of a friends board is shared with another viewer.

Who is in an audience changes too (a follow, a join, a leave, a removal):
the app that changes it calls `audience_changed` after commit, which reaches
every hub watching a board of that audience, whatever its day, on one group
(`AUDIENCES_GROUP`). The hub then forgets the audience it knew, so that every
change of the day's board reaches that narrowed board until a read that began
after the membership change has learned the new audience: a game of a player
who has just joined is never filtered out by the audience read before they
joined, whichever of the two announcements arrives first.

Every read carries a version from a per-board counter that grows with each read
in this process, so a consumer never replaces a fresher board by an older one.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
from collections.abc import Callable, Collection, Hashable
from dataclasses import dataclass, field
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from channels.db import database_sync_to_async
from channels.layers import BaseChannelLayer
from django.conf import settings
from rest_framework.utils.encoders import JSONEncoder

from easyharp_site.layer import (
    RETRY_FIRST_SECONDS,
    RETRY_MAX_SECONDS,
    Gathering,
    LayerMember,
    announce_on_layer,
)
from easyharp_site.sockets import text_frame
from leaderboards.audiences import Audience
from leaderboards.models import Board
from leaderboards.selectors import leaderboard_among, leaderboard_entries_of, leaderboard_page

logger = logging.getLogger(__name__)

T = TypeVar("T")

# How many entries the socket shows: the top of the board.
WATCHED_ENTRIES = 50
# The group on which membership changes of every audience are announced: each
# hub watching a narrowed board is in it (one group, not one per audience).
AUDIENCES_GROUP = "leaderboard.audiences"


class BoardKey(NamedTuple):
    """One live board: a day and an order ("score" or "moves"), narrowed to an
    audience (`leaderboards.audiences.Audience`) or not (None)."""

    date: datetime.date
    order: str
    audience: Audience | None = None

    @property
    def group(self) -> str:
        """The group name of the day's board on the channel layer (narrowed ones share it)."""
        return f"leaderboard.{self.date.isoformat()}.{self.order}"

    @property
    def groups(self) -> tuple[str, ...]:
        """The groups whose messages move this board: the day's board's, and for a
        narrowed board the group of membership changes too."""
        return (self.group, AUDIENCES_GROUP) if self.audience else (self.group,)


def encode_json(value: Any) -> str:
    """JSON text as the REST API renders it (DRF's encoder: ISO dates with `Z`), compact."""
    return json.dumps(value, cls=JSONEncoder, ensure_ascii=False, separators=(",", ":"))


# --- Announcing (service side) -----------------------------------------------


def board_changed(
    *, date: datetime.date, orders: Collection[str], players: Collection[int] = ()
) -> None:
    """Tell every watcher of the day's boards in `orders` that they changed.

    `players` names whose entries moved, so that only the narrowed boards
    (friends, leagues) that hold one of them are read again; without it, every
    narrowed board of the day is.

    Called by the service layer inside `transaction.on_commit`, after a stored or
    voided game moved the boards. Under the server, the request does not wait:
    the change joins those its process gathers for `GATHER_SECONDS`,
    and the server's event loop sends one message per board for all of them
    (`_changes_gathered`). Elsewhere (a job, a command) it is sent before this
    returns. Never raises: if the channel layer fails (Redis down) or takes
    longer than `LIVE_BOARD_SEND_TIMEOUT` seconds, the failure is logged and
    the caller carries on; watchers catch up on the next change, and every hub
    refreshes its boards when its own connection comes back.
    """
    boards = [BoardKey(date, order) for order in orders if order in Board.values]
    if boards:
        _changes.add((boards, frozenset(players) or None))


# Per board, the players whose entries moved (None: all of the day's narrowed
# boards).
_Changes = dict[BoardKey, frozenset[int] | None]


def _changes_gathered(changes: list[tuple[list[BoardKey], frozenset[int] | None]]) -> None:
    """Send the changes of many requests as one message per board, naming every
    player who moved it (none when one change named nobody)."""
    merged: _Changes = {}
    for boards, moved in changes:
        for board in boards:
            known = merged.get(board, frozenset())
            merged[board] = None if known is None or moved is None else known | moved
    _changes_send(merged)


# Board changes a server process's requests hand on within GATHER_SECONDS go
# out together, one message per board however many games moved it, rather
# than messages of each submission (docs/PERFORMANCE.md).
_changes = Gathering(_changes_gathered, blocking=False, logger=logger)


def _changes_send(changes: _Changes) -> None:
    failed = (
        f"Live boards not told of a change to {', '.join(board.group for board in changes)} "
        "(channel layer unavailable); the change itself is stored."
    )
    announce_on_layer(lambda layer: _announce(layer, changes), logger=logger, failed=failed)


def audience_changed(*, kind: str, id: int) -> None:
    """Tell every watcher of a board narrowed to the audience `kind` `id` (of any
    day) that who is in it changed: a follow or unfollow (`friends` of the
    follower), a join, a leave or a removal (`league`).

    Called by the apps that keep the audiences, inside `transaction.on_commit`.
    Never raises, as `board_changed`: a lost announcement is made good by the
    hub's periodic refresh.
    """
    failed = (
        f"Live boards not told that the audience {kind} {id} changed (channel layer "
        "unavailable); the change itself is stored."
    )
    message = {"type": "audience.changed", "kind": kind, "id": id}
    announce_on_layer(
        lambda layer: _send(layer, AUDIENCES_GROUP, message), logger=logger, failed=failed
    )


async def _send(layer: BaseChannelLayer, group: str, message: dict[str, Any]) -> None:
    await asyncio.wait_for(layer.group_send(group, message), settings.LIVE_BOARD_SEND_TIMEOUT)


async def _announce(layer: BaseChannelLayer, changes: _Changes) -> None:
    timeout: float = settings.LIVE_BOARD_SEND_TIMEOUT
    for board, players in changes.items():
        message: dict[str, Any] = {
            "type": "board.changed",
            "date": board.date.isoformat(),
            "order": board.order,
        }
        if players:
            message["players"] = sorted(players)
        await asyncio.wait_for(layer.group_send(board.group, message), timeout)


# --- Reading ----------------------------------------------------------------------


@dataclass(frozen=True)
class BoardView:
    """The watched part of a board at one moment: the top entries and the player count."""

    version: int
    total: int
    entries: list[dict[str, Any]]
    # `entries` encoded once, shared by every socket (also compared to detect change).
    entries_json: str
    deal: str | None
    # The own entry of each player asked for (None: not on the board).
    mine: dict[int, dict[str, Any] | None] = field(default_factory=dict)
    # A narrowed board's players when it was read (None: the day's whole board).
    audience: frozenset[int] | None = None


_Read = tuple[
    int, list[dict[str, Any]], str | None, dict[int, dict[str, Any] | None], frozenset[int] | None
]


def _board_read(board: BoardKey, player_ids: Collection[int] = ()) -> _Read:
    if board.audience:
        # Who is in the audience, for filtering the announced changes, and the
        # board among them.
        audience = board.audience.player_ids()
        among = leaderboard_among(
            date=board.date,
            order=board.order,
            audience=board.audience.sql,
            limit=WATCHED_ENTRIES,
            mine=player_ids,
        )
        return among["total"], among["entries"], among["deal"], among["mine"], audience
    page = leaderboard_page(date=board.date, order=board.order, limit=WATCHED_ENTRIES, offset=0)
    found = (
        leaderboard_entries_of(date=board.date, order=board.order, player_ids=player_ids)
        if player_ids
        else {}
    )
    mine = {p: found.get(p) for p in player_ids}
    return page["total"], page["entries"], page.get("deal"), mine, None


@dataclass(frozen=True)
class BoardUpdate:
    """One fresh read of a board as the hub hands it to every socket, encoded once.

    `full_text` is the whole `update` message with `entries` (what every socket
    that showed the previous read gets, byte for byte the same), `full_frame`
    the same as one websocket frame (written as is to every socket whose
    server allows it: see `easyharp_site.compat.FrameWriter`), `head` the
    message without its closing brace, for a socket that adds or leaves out
    fields of its own. `mine` holds the encoded own entry (`me`) of every
    player signed in on one of the hub's sockets when the read began, all
    read at once.
    """

    version: int
    total: int
    entries_json: str
    head: str
    full_text: str
    full_frame: bytes
    mine: dict[int, str] = field(default_factory=dict)
    # A narrowed board's players at this read (None: the day's whole board).
    audience: frozenset[int] | None = None

    @classmethod
    def of(cls, board: BoardKey, view: BoardView) -> BoardUpdate:
        """The update message of a read of ``board``, encoded once."""
        head = encode_json(
            {
                "type": "update",
                "date": board.date.isoformat(),
                "order": board.order,
                "version": view.version,
                "total": view.total,
            }
        )[:-1]
        full_text = f'{head},"entries":{view.entries_json}}}'
        return cls(
            view.version,
            view.total,
            view.entries_json,
            head,
            full_text,
            text_frame(full_text),
            {player_id: encode_json(entry) for player_id, entry in view.mine.items()},
            view.audience,
        )


class BoardSocket(Protocol):
    """What the hub needs of a socket watching a board (the consumer)."""

    player_id: int | None

    async def board_update(self, update: BoardUpdate) -> None:
        """Take a fresh read of the board; must not wait on anything slow."""


# --- The per-process hub -----------------------------------------------------------


@dataclass(eq=False)
class _BoardState:
    key: BoardKey
    sockets: set[BoardSocket] = field(default_factory=set)
    version: int = 0
    audience: frozenset[int] | None = None
    # Membership changes announced so far: a read that began before the last
    # one does not teach the hub the audience.
    audience_changes: int = 0
    dirty: bool = False
    last_read_at: float = float("-inf")
    last_published: tuple[int, str] | None = None
    flusher: asyncio.Task[None] | None = field(default=None, repr=False)
    # The shared snapshot read asked for last (`BoardHub.read(share=True)`).
    shared: _SharedRead[BoardView] | None = field(default=None, repr=False)


@dataclass(eq=False)
class _SharedRead(Generic[T]):
    """A read for the sockets that asked for it before it began in the database thread.

    A board's snapshot: each of those sockets watched the board before it began,
    so it holds every change their updates leave out. A connect's first read
    (`BoardHub.connect_read`): each of them would have read the same then.
    """

    task: asyncio.Task[T] | None = None
    # Set by the database thread as the read begins: later sockets need a read of their own.
    begun: bool = False


class BoardHub(LayerMember):
    """This process's subscriber to board changes and coalescer of board updates.

    One per event loop (`BoardHub.current()`). Consumers call `watch` on connect
    and `unwatch` when their socket ends, however it ends; the hub joins the
    board's group on the default layer while at least one socket watches it,
    and hands each fresh read of the board to every watching socket's
    `board_update`.
    """

    logger = logger
    log_name = "Live boards"

    def __init__(self) -> None:
        super().__init__()
        self._boards: dict[BoardKey, _BoardState] = {}
        # The watched boards of each group (a day's board and the boards narrowing it).
        self._groups: dict[str, set[BoardKey]] = {}
        self._subscribed: set[str] = set()
        self._refresher: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        # The connect reads not begun yet, by what they read (`connect_read`).
        self._connect_reads: dict[tuple[Hashable, ...], _SharedRead[Any]] = {}

    # Watching

    async def watch(self, board: BoardKey, socket: BoardSocket) -> None:
        """Add `socket` to `board`'s watchers; subscribe to its changes if it is the first.

        From now on the socket gets every update of the board, possibly before
        this returns: a socket still sending its snapshot must hold them back.
        """
        state = self._boards.get(board)
        if state is None:
            state = self._boards[board] = _BoardState(board)
            for group in board.groups:
                self._groups.setdefault(group, set()).add(board)
        if socket in state.sockets:
            return
        state.sockets.add(socket)
        async with self._lock:
            for group in board.groups:
                try:
                    if self._channel is None:
                        self._channel = await self._layer.new_channel()
                    # Not "the first watcher": others may have counted themselves
                    # in while the first waited for its channel.
                    if group not in self._subscribed:
                        await self._subscribe(group)
                except Exception:
                    # The socket still gets its snapshot. The receiver (or, for a
                    # pub/sub layer that does not report outages, the periodic
                    # refresh) subscribes every watched board once the layer is back.
                    logger.warning("Could not join live board group %s", group, exc_info=True)
            if self._receiver is None or self._receiver.done():
                self._keep_receiving()
                self._refresher = asyncio.create_task(self._refresh_periodically())

    def unwatch(self, board: BoardKey, socket: BoardSocket) -> None:
        """Remove `socket` from `board`'s watchers; unsubscribe when none is left.

        Synchronous, so that it runs to its end wherever a consumer's life ends,
        even in the `finally` of a cancelled task: the socket is out before this
        returns, and leaving the board's group on the channel layer, which
        waits on the network, runs in a task of the hub.
        """
        state = self._boards.get(board)
        if state is None or socket not in state.sockets:
            return
        state.sockets.discard(socket)
        if state.sockets:
            return
        del self._boards[board]
        if state.flusher is not None:
            state.flusher.cancel()
        for group in board.groups:
            keys = self._groups.get(group, set())
            keys.discard(board)
            if keys:
                continue
            self._groups.pop(group, None)
            self._spawn(self._leave_group(group))

    async def _leave_group(self, group: str) -> None:
        async with self._lock:
            # A socket may have started watching again while we waited.
            if self._channel is None or group in self._groups:
                return
            self._subscribed.discard(group)
            try:
                await self._layer.group_discard(group, self._channel)
            except Exception:
                # The membership expires by itself; a stray change costs one read.
                logger.warning("Could not leave live board group %s", group, exc_info=True)

    async def read(
        self, board: BoardKey, player_ids: Collection[int] = (), *, share: bool = False
    ) -> BoardView:
        """A fresh read of `board`, versioned after every earlier read of it here,
        with the own entries of `player_ids`. With `share` (a snapshot with no own
        entries, of a board the caller watches already) the read is shared with the
        other callers that asked before it began: many sockets connecting at once
        cost one read of their board, not one each."""
        state = self._boards.get(board)
        if state is None:
            state = _BoardState(board)
        elif share and not player_ids:
            if state.shared is None or state.shared.begun:
                shared = _SharedRead[BoardView]()
                shared.task = asyncio.create_task(self._read(state, board, (), shared))
                state.shared = shared
            assert state.shared.task is not None
            return await asyncio.shield(state.shared.task)
        return await self._read(state, board, player_ids)

    async def connect_read(self, read: Callable[..., T], *args: Hashable) -> T:
        """`read(*args)` in the database thread, shared with the sockets that ask for the
        same before it begins there: what an anonymous socket reads as it connects
        (the day's board open, its replays locked) is the same for every one of
        them, and a restart sends them all back at once. What `read` raises,
        every socket that shared it raises."""
        key = (read, *args)
        shared = self._connect_reads.get(key)
        if shared is None or shared.begun:
            shared = self._connect_reads[key] = _SharedRead()

            def begin_then_read() -> T:
                shared.begun = True
                return read(*args)

            shared.task = asyncio.create_task(database_sync_to_async(begin_then_read)())
            shared.task.add_done_callback(lambda task: self._connect_read_done(key, shared, task))
        assert shared.task is not None
        return await asyncio.shield(shared.task)

    def _connect_read_done(
        self, key: tuple[Hashable, ...], shared: _SharedRead[Any], task: asyncio.Task[Any]
    ) -> None:
        if self._connect_reads.get(key) is shared:
            del self._connect_reads[key]
        if not task.cancelled():
            task.exception()  # raised to every socket that shared it, not logged as lost

    async def _read(
        self,
        state: _BoardState,
        board: BoardKey,
        player_ids: Collection[int],
        shared: _SharedRead[BoardView] | None = None,
    ) -> BoardView:
        state.version += 1
        version = state.version
        changes = state.audience_changes

        # Reads run one at a time in Channels' database thread, in the order of
        # their versions: a higher version never holds older data.
        def begin_then_read() -> _Read:
            if shared is not None:
                shared.begun = True
            return _board_read(board, player_ids)

        total, entries, deal, mine, audience = await database_sync_to_async(begin_then_read)()
        # Who is on a narrowed board now: which announced changes concern it;
        # unless its membership changed while this read ran (then the next read,
        # already due, tells).
        if state.audience_changes == changes:
            state.audience = audience
        return BoardView(version, total, entries, encode_json(entries), deal, mine, audience)

    # Subscribing to changes

    async def _subscribe(self, group: str) -> None:
        assert self._channel is not None
        await self._layer.group_add(group, self._channel)
        if group in self._groups:
            self._subscribed.add(group)

    async def _layer_back(self) -> None:
        for group in list(self._groups):
            await self._subscribe(group)
        logger.info("Live boards: channel layer back, refreshing every board")
        for state in list(self._boards.values()):
            self._poke(state)

    def _handle(self, message: dict[str, Any]) -> None:
        """A `board.changed` message: read again every watched board it moved; an
        `audience.changed` one: read again the boards narrowed to that audience."""
        if message.get("type") == "audience.changed":
            self._audience_changed(message)
            return
        if message.get("type") != "board.changed":
            return
        try:
            board = BoardKey(datetime.date.fromisoformat(message["date"]), message["order"])
            players = message.get("players")
            moved = None if players is None else frozenset(int(p) for p in players)
        except (KeyError, TypeError, ValueError):
            logger.warning("Live boards: ignored a malformed change message %r", message)
            return
        for key in list(self._groups.get(board.group, ())):
            state = self._boards.get(key)
            if state is None:
                continue
            # A narrowed board moves only when one of its players did (an
            # audience not read yet is read anyway).
            narrowed = key.audience and moved is not None and state.audience is not None
            if narrowed and not state.audience & moved:  # type: ignore[operator]
                continue
            self._poke(state)

    def _audience_changed(self, message: dict[str, Any]) -> None:
        """Who is in an audience changed: its boards forget the audience they knew
        (so that every change of their day reaches them until a fresh read has
        learned it) and are read again."""
        try:
            kind, id = str(message["kind"]), int(message["id"])
        except (KeyError, TypeError, ValueError):
            logger.warning("Live boards: ignored a malformed audience message %r", message)
            return
        for key in list(self._groups.get(AUDIENCES_GROUP, ())):
            state = self._boards.get(key)
            if (
                state is None
                or key.audience is None
                or (key.audience.kind, key.audience.id) != (kind, id)
            ):
                continue
            state.audience = None
            state.audience_changes += 1
            self._poke(state)

    async def _refresh_periodically(self) -> None:
        """Every LIVE_BOARD_REFRESH_SECONDS, subscribe again and re-read every board.

        A safety net: a change announcement lost on the way (Redis down when it
        was sent, a pub/sub message dropped) leaves no socket stale for longer,
        and a queue-based layer's group memberships (which expire) stay fresh.
        A re-read that finds the board unchanged sends nothing.
        """
        while True:
            await asyncio.sleep(float(settings.LIVE_BOARD_REFRESH_SECONDS))
            for group in list(self._groups):
                try:
                    if self._channel is not None:
                        await self._subscribe(group)
                except Exception:
                    logger.warning("Could not renew live board group %s", group)
            for state in list(self._boards.values()):
                self._poke(state)

    # Coalescing and publishing

    def _poke(self, state: _BoardState) -> None:
        state.dirty = True
        if state.flusher is None or state.flusher.done():
            state.flusher = asyncio.create_task(self._flush(state))

    async def _flush(self, state: _BoardState) -> None:
        """Publish `state`'s board until no change is pending, at most N reads a second.

        Trailing edge: a change that arrives while a read is waiting or running
        sets `dirty` again, so another read, started after it, always follows.
        """
        loop = asyncio.get_running_loop()
        delay = RETRY_FIRST_SECONDS
        while state.dirty and state.sockets:
            interval = 1.0 / float(settings.LIVE_BOARD_MAX_UPDATES_PER_SECOND)
            wait = state.last_read_at + interval - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            state.dirty = False
            state.last_read_at = loop.time()
            try:
                await self._publish(state)
                delay = RETRY_FIRST_SECONDS
            except Exception:
                logger.warning("Live boards: could not read %s", state.key.group, exc_info=True)
                state.dirty = True
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX_SECONDS)

    async def _publish(self, state: _BoardState) -> None:
        # Signed-in sockets show their own entry and rank, which can move while
        # the top of the board stands still: read them all with the board, in
        # one statement, rather than one query per socket.
        players = {s.player_id for s in state.sockets if s.player_id is not None}
        view = await self.read(state.key, players)
        published = (view.total, view.entries_json)
        if published == state.last_published and not players:
            return
        state.last_published = published
        update = BoardUpdate.of(state.key, view)
        # Straight to each socket: one text and one frame, no per-socket
        # encoding or queueing. A socket's `board_update` does not wait (it
        # writes the frame to its transport, or leaves the update to a task of
        # its own when its reader is slow), so this loop is the whole fan-out.
        for socket in list(state.sockets):
            try:
                await socket.board_update(update)
            except Exception:
                logger.warning("Live boards: could not update a socket", exc_info=True)
