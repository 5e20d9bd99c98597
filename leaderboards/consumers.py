"""The live leaderboard socket: `ws/daily/<date>/leaderboard/?order=score|moves`.

With `&scope=friends` a signed-in player watches the day's board narrowed to
themselves and the players they follow, ranked among them (`leaderboards.audiences`);
the board and its `me` are that viewer's alone. The leagues' sockets are this
one narrowed to a league (`leagues.consumers`).

Protocol (server to client, JSON text frames):

- `{"type": "snapshot", "date", "deal", "order", "version", "total", "entries",
  "replays_locked", "me"?}` once, on connect: the top 50 entries shaped as in
  the REST leaderboard, the number of players, whether the entries' games still
  refuse their replays to this viewer (the day runs and they have not played
  it; their own `me` entry means they have), and for a signed-in player `me`,
  their own entry with its rank (null when they have none).
- `{"type": "update", "date", "order", "version", "total", "entries"?, "me"?}`
  whenever a committed change moved what the socket shows. A field that is
  present replaces the client's copy; a field that is absent is unchanged.
  Versions grow; applying every update in order to the snapshot gives exactly
  what a fresh snapshot would show.
- `{"type": "pong"}` in answer to `{"type": "ping"}`, the one client message.
- `{"type": "error", "error": {"code", "message"}}` for a client message that is
  too large, not JSON, or not understood; the socket stays open.

Close codes (after the handshake, so that browsers see them):

- 4400: the `order` query parameter is neither `score` nor `moves`, or `scope`
  is neither `all` nor `friends`.
- 4401: `scope=friends` without a signed-in player; or the session the socket
  signed in with has ended while it was open (signed out, here or everywhere,
  a new password elsewhere, a ban, a deletion: `easyharp_site.accounts.live`). A
  socket whose session has already ended when it connects is anonymous.
- 4404: the date has no board: not a date, a future day, a day the service
  does not serve, or a day not prepared yet; or, on a narrowed board, the
  player is not (or no longer) one of its audience.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.contrib.auth.models import AnonymousUser

from easyharp_site.accounts.live import PlayerSockets, session_player_id
from easyharp_site.compat import FrameWriter
from easyharp_site.dates import day_from_text
from easyharp_site.errors import ServiceError
from easyharp_site.sockets import (
    FRAME_WRITER,
    HandlersWithoutHop,
    MessageRefused,
    client_message,
    text_frame,
)
from games.selectors import daily_deal_get, day_lock
from leaderboards import live
from leaderboards.audiences import Audience, Members
from leaderboards.models import Board

CLOSE_BAD_ORDER = 4400
CLOSE_NOT_SIGNED_IN = 4401
CLOSE_NO_BOARD = 4404
# The `scope` query parameter: the day's whole board, or the viewer's friends.
SCOPES = ("all", "friends")
# Client messages read ahead while the socket connects (answered after the
# snapshot); past this many the rest wait in the server's queue.
HELD_WHILE_CONNECTING = 8

Message = dict[str, Any]

logger = logging.getLogger(__name__)


def _board_open(date: datetime.date) -> str | None:
    """None when `date` has a board (its day is prepared and served), else why not."""
    try:
        daily_deal_get(date=date)
    except ServiceError as error:
        return error.message
    return None


def _replays_locked(date: datetime.date, user: Any) -> bool:
    """Whether the day's replays are still closed to this socket's viewer (no spoilers)."""
    return day_lock(date=date, viewer=user if user is not None else AnonymousUser()) is not None


def _board_read(
    date: datetime.date, user: Any, session_key: str | None
) -> tuple[str | None, bool, bool]:
    """What a socket's connect reads, in one call: why `date` has no board (None when it
    has one), whether the signed-in `user`'s session (`session_key`, None when
    anonymous) still holds, and whether the day's replays are closed to the viewer
    (anonymous when the session has ended)."""
    why_not = _board_open(date)
    if why_not is not None:
        return why_not, False, False
    holds = session_key is not None and session_player_id(session_key=session_key) == user.pk
    return None, holds, _replays_locked(date, user if holds else None)


class LeaderboardConsumer(HandlersWithoutHop, AsyncJsonWebsocketConsumer):
    """One socket watching one board; `live.BoardHub` calls `board_update` directly.

    No channel layer: the hub lives in the same event loop, and handing it the
    consumer saves a queue, a task wake-up and a dispatch per socket per update.
    """

    board: live.BoardKey | None = None
    hub: live.BoardHub | None = None
    player_id: int | None = None
    # Where a signed-in socket hears that its player's sessions ended, and
    # whether its own has (then it closes as soon as its snapshot is out).
    sessions: PlayerSockets | None = None
    session_over: bool = False
    # Closed, by either side: nothing more is sent (the server would raise).
    closed: bool = False
    # What the socket shows now, to send only what changed.
    version: int = 0
    total: int = -1
    entries_json: str = ""
    me_json: str = ""
    # The viewer has not played the day yet: its games' replays refuse them.
    replays_locked: bool = False
    # False until the snapshot is sent: updates before it wait in `pending`.
    ready: bool = False
    # The newest update not sent yet (newest wins) and the task sending it.
    pending: live.BoardUpdate | None = None
    sender: asyncio.Task[None] | None = None
    # Writes framed updates straight to the socket, when the server allows it.
    writer: FrameWriter | None = None

    def __init__(self, *, friends: Members | None = None) -> None:
        """`friends`: who a viewer's friends are (the site's wiring hands the leagues'
        read); without it, `scope=friends` is refused as unknown."""
        super().__init__()
        self.friends = friends

    async def __call__(
        self,
        scope: dict[str, Any],
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        """The socket's whole life, which always ends with the socket out of the hub.

        In place of Channels' loop, which handles one message at a time: a socket
        that went away while its connect waited for the database was noticed
        only after the reads, and when hundreds did at once, daphne killed their
        consumers (cancelled them: "took too long to shut down") before
        `disconnect` ran, and the hub kept them for good. Here the socket is
        listened to while it connects, so that a close cancels the connect and
        the reads it waits for; and however the consumer ends (closed,
        cancelled, failed), `finally` takes it out of the hub.
        """
        self.scope = scope
        # No channel layer of its own: updates come from `live.BoardHub`.
        self.channel_layer = None
        self.base_send = send
        self.writer = scope.get(FRAME_WRITER)
        try:
            await self._serve(receive)
        except StopConsumer:
            pass
        finally:
            self._leave_board()

    async def _serve(self, receive: Callable[[], Awaitable[Message]]) -> None:
        """Dispatch the socket's messages in order; a close during the connect cuts it short."""
        connecting = asyncio.ensure_future(self.dispatch(await receive()))
        incoming = asyncio.ensure_future(receive())
        held: list[Message] = []
        try:
            while not connecting.done():
                reading = len(held) < HELD_WHILE_CONNECTING
                await asyncio.wait(
                    (connecting, incoming) if reading else (connecting,),
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if connecting.done() or not incoming.done():
                    continue
                message = incoming.result()
                if message["type"] == "websocket.disconnect":
                    connecting.cancel()
                    await asyncio.wait((connecting,))
                    await self.dispatch(message)
                    return
                held.append(message)
                incoming = asyncio.ensure_future(receive())
            connecting.result()
            for message in held:
                await self.dispatch(message)
            while True:
                await self.dispatch(await incoming)
                incoming = asyncio.ensure_future(receive())
        finally:
            connecting.cancel()
            incoming.cancel()

    async def connect(self) -> None:
        # Accept first: a close before the handshake reaches the browser as a
        # bare failure, without our close code.
        await self.accept()
        query = parse_qs(self.scope.get("query_string", b"").decode("latin1"))
        order = query.get("order", [Board.SCORE.value])[-1]
        if order not in Board.values:
            await self._refuse(CLOSE_BAD_ORDER, "bad_order", "order must be score or moves.")
            return
        text = self.scope["url_route"]["kwargs"]["date"]
        try:
            date = day_from_text(text)
        except ValueError:
            await self._refuse(CLOSE_NO_BOARD, "no_board", f"{text!r} is not a date (YYYY-MM-DD).")
            return
        user = self.scope.get("user")
        player_id = user.pk if user is not None and user.is_authenticated else None
        if player_id is not None:
            # Listen for the end of the player's sessions before the session is checked
            # (Channels' own check misses a session ended by "sign out everywhere"), so
            # that an end committed meanwhile is heard.
            self.sessions = PlayerSockets.current()
            await self.sessions.watch(player_id, self)
        # One trip to the database thread for everything the connect reads; the
        # anonymous sockets connecting at once share theirs.
        if player_id is None:
            read = live.BoardHub.current().connect_read(_board_read, date, None, None)
        else:
            read = database_sync_to_async(_board_read)(date, user, self._session_key())
        why_not, holds, self.replays_locked = await read
        if why_not is not None:
            self._stop_listening(player_id)
            await self._refuse(CLOSE_NO_BOARD, "no_board", why_not)
            return
        if holds:
            self.player_id = player_id
        elif player_id is not None:
            # A session that has ended when the socket connects: the socket is anonymous.
            self._stop_listening(player_id)
            self.scope["user"] = AnonymousUser()
        board = await self.board_key(date, order, query)
        if board is None:
            return
        if self.session_over:
            await self._session_refuse()
            return
        # Watch before reading, so that no change falls between the snapshot and
        # the first update; updates that come meanwhile wait in `pending`.
        self.board, self.hub = board, live.BoardHub.current()
        await self.hub.watch(self.board, self)
        await self._send_snapshot()
        if self.session_over:
            await self._session_refuse()
            return
        self.ready = True
        self._start_sender()

    def _stop_listening(self, player_id: int | None) -> None:
        if self.sessions is not None and player_id is not None:
            self.sessions.unwatch(player_id, self)
            self.sessions = None

    def _session_key(self) -> str | None:
        session = self.scope.get("session")
        return None if session is None else session.session_key

    async def session_ended(self) -> None:
        """Sessions of this socket's player ended: close it (4401) if its own did."""
        if self.player_id is None or self.session_over:
            return
        key = self._session_key()
        if await database_sync_to_async(session_player_id)(session_key=key) == self.player_id:
            return
        # Announcements come one after another (a sign-out, then "everywhere"):
        # another check may have closed the socket while this one read.
        if self.session_over or self.closed:
            return
        self.session_over = True
        # While connecting, `connect` closes it once its snapshot is out.
        if self.ready:
            await self._session_refuse()

    async def _session_refuse(self) -> None:
        self._leave_board()
        await self._refuse(
            CLOSE_NOT_SIGNED_IN, "session_ended", "This session has ended: sign in again."
        )

    async def board_key(
        self, date: datetime.date, order: str, query: dict[str, list[str]]
    ) -> live.BoardKey | None:
        """The board this socket watches, or None after refusing the socket.

        Here the day's board, or with `scope=friends` the signed-in player's
        friends board; a subclass narrows it otherwise (a league's).
        """
        scope = query.get("scope", ["all"])[-1]
        if scope not in SCOPES or (scope == "friends" and self.friends is None):
            await self._refuse(CLOSE_BAD_ORDER, "bad_scope", "scope must be all or friends.")
            return None
        if scope == "all":
            return live.BoardKey(date, order)
        if self.player_id is None:
            await self._refuse(
                CLOSE_NOT_SIGNED_IN, "not_authenticated", "scope=friends needs a signed-in player."
            )
            return None
        assert self.friends is not None
        return live.BoardKey(date, order, Audience("friends", self.player_id, self.friends))

    async def disconnect(self, code: int) -> None:
        self.closed = True
        self._leave_board()
        if self.sender is not None:
            # What it was sending has nowhere to go.
            self.sender.cancel()

    def _leave_board(self) -> None:
        """Stop watching, at once (no await: this runs in `finally` of a cancelled task too)."""
        sessions, self.sessions = self.sessions, None
        if sessions is not None and self.player_id is not None:
            sessions.unwatch(self.player_id, self)
        board, self.board = self.board, None
        if board is None or self.hub is None:
            return
        if self.sender is not None:
            self.sender.cancel()
        self.hub.unwatch(board, self)

    async def _send_snapshot(self) -> None:
        assert self.board is not None and self.hub is not None
        players = () if self.player_id is None else (self.player_id,)
        view = await self.hub.read(self.board, players, share=True)
        message: dict[str, Any] = {
            "type": "snapshot",
            "date": self.board.date.isoformat(),
            "deal": view.deal,
            "order": self.board.order,
            "version": view.version,
            "total": view.total,
            "entries": view.entries,
            "replays_locked": self.replays_locked,
        }
        self.version, self.total, self.entries_json = view.version, view.total, view.entries_json
        if self.player_id is not None:
            me = view.mine[self.player_id]
            message["me"] = me
            self.me_json = live.encode_json(me)
        await self.send(text_data=live.encode_json(message))

    async def board_update(self, update: live.BoardUpdate) -> None:
        """A fresh read of the board from the hub: pass on what changed for this socket.

        Sent at once: the hub's shared frame (or text), or a text with this
        player's own entry, which the hub read with the board. The update waits
        (newest wins) only while the snapshot is still being sent, or while the
        socket's reader is behind (its transport above the high-water mark).
        """
        if self.board is None or await self._left_audience(update):
            return
        if self.ready and self.sender is None:
            if self.writer is None:
                await self._send_update(update)
                return
            if self.writer.ready():
                text = self._update_text(update)
                if text is not None:
                    self.writer.write(
                        update.full_frame if text is update.full_text else text_frame(text)
                    )
                return
        self.pending = update
        self._start_sender()

    def _start_sender(self) -> None:
        if self.ready and self.pending is not None and self.sender is None:
            self.sender = asyncio.create_task(self._send_pending())
            self.sender.add_done_callback(self._sender_done)

    def _sender_done(self, task: asyncio.Task[None]) -> None:
        # A socket closed under a send (the client gone, or the server closing it)
        # leaves nothing to do; anything else is a fault to see.
        if task.cancelled() or (error := task.exception()) is None:
            return
        if self.closed or isinstance(error, OSError):
            logger.debug("board update not sent: the socket closed (%s)", error)
        else:
            logger.error("board update not sent", exc_info=error)

    async def _send_pending(self) -> None:
        try:
            while self.pending is not None and self.board is not None:
                update, self.pending = self.pending, None
                await self._send_update(update)
        finally:
            self.sender = None

    async def _left_audience(self, update: live.BoardUpdate) -> bool:
        """Close this socket when the board it watches no longer has it (True: closed)."""
        if update.audience is None or self.player_id in update.audience:
            return False
        # Removed from the league (or whatever narrows the board) while watching.
        await self._refuse(CLOSE_NO_BOARD, "not_found", "You no longer see this board.")
        self._leave_board()
        return True

    async def _send_update(self, update: live.BoardUpdate) -> None:
        if self.board is None or await self._left_audience(update):
            return
        text = self._update_text(update)
        if text is not None:
            await self.send(text_data=text)

    def _update_text(self, update: live.BoardUpdate) -> str | None:
        """The message that brings this socket from what it shows to `update` (None: nothing).

        Takes the update as shown: call it only right before sending its answer.
        """
        if self.board is None or update.version <= self.version:
            return None
        # A signed-in socket always finds its entry here: the hub asks for every
        # socket watching when its read takes its version, and a socket that
        # starts watching later reads its snapshot later, with a higher version.
        self.version = update.version
        entries_changed = update.entries_json != self.entries_json
        if entries_changed:
            self.entries_json = update.entries_json
        me_part = ""
        if self.player_id is not None:
            me_json = update.mine[self.player_id]
            if me_json != self.me_json:
                self.me_json = me_json
                me_part = f',"me":{me_json}'
        if not entries_changed and not me_part and update.total == self.total:
            return None
        self.total = update.total
        if entries_changed and not me_part:
            return update.full_text
        entries_part = f',"entries":{update.entries_json}' if entries_changed else ""
        return f"{update.head}{entries_part}{me_part}}}"

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Answer a client message; anything unexpected gets an error, never a crash."""
        try:
            content = client_message(text_data, settings.LIVE_CLIENT_MESSAGE_MAX_BYTES)
        except MessageRefused as refused:
            await self._send_error(refused.code, refused.message)
            return
        if isinstance(content, dict) and content.get("type") == "ping":
            if not self.closed:
                await self.send(text_data='{"type":"pong"}')
            return
        await self._send_error(
            "unknown_message", 'The only message understood is {"type": "ping"}.'
        )

    async def _refuse(self, close_code: int, code: str, message: str) -> None:
        """Send the error, then close: once, whoever refuses first."""
        if self.closed:
            return
        await self._send_error(code, message)
        if not self.closed:
            self.closed = True
            await self.close(code=close_code)

    async def _send_error(self, code: str, message: str) -> None:
        if not self.closed:
            await self.send_json({"type": "error", "error": {"code": code, "message": message}})
