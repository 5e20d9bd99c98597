"""Watching a player's ranked attempt live: `ws/daily/<date>/players/<username>/attempt/`.

The player's socket (`games.consumers`) passes each stored action to the
watchers through the process's feed (`games.live.AttemptFeed`, within
`GATHER_SECONDS`), and the player is told how many watch. Only a viewer who
may see the day's games watches (the no-spoiler rule, `games.selectors.
day_lock`): until the day closes, a player who has finished their own ranked
attempt of the day; before that the socket is refused with `replay_locked`.

While the watched game of a running day is open, a watcher sees its progress
only (cards on the foundations, score, moves, clock), never its table or its
actions: a live table is a copying channel for a second account
(docs/FAIR_PLAY.md, "Watching live"). The table is shown once the game is
finished, once its day is closed, and to the player themselves.

Each socket keeps the watched game as its client has it (`WatchedTable`): the
snapshot's log, then each action the feed brings, played in order. The socket
listens to the feed before it reads the snapshot, and its player's socket, on
hearing that someone watches, passes on every stored action once more; what
the snapshot holds already is left out, and an action the feed skipped (a
lost message) makes the socket read the snapshot again. So the snapshot and
the messages after it are always the game. The progress view needs no table:
each feed item carries the game's progress after its actions, as the player's
socket has it, and the socket passes on the newest; a lost item costs no read,
the next one says where the game is.

Protocol (server to client, JSON text frames):

- `{"type": "snapshot", "view", "player", "date", "deal", "log", "actions",
  "score", "moves", "foundations", "won", "elapsed_ms", "status", "game",
  "assisted", "watchers"}` on connect, and again when the stored game changed
  under the stream (another device of the player), a hint made it assisted,
  it was submitted, or the client asked (`view`: `table`, or `progress` with
  `deal` and `log` null; `game`: the game that closed the attempt, null while
  it is open).
- `{"type": "actions", "from", "actions", "elapsed_ms"}` (the table view):
  actions `from`, `from + 1`, ... were played, `from` always one past what
  the socket sent before.
- `{"type": "progress", "actions", "score", "moves", "foundations", "won",
  "elapsed_ms"}` (the progress view): the game after its first `actions`.
- `{"type": "closed", "game"}` once the attempt is submitted (its game), then
  a snapshot of it.
- `{"type": "pong"}` in answer to `{"type": "ping"}`; a snapshot in answer to
  `{"type": "snapshot"}` (a client that sees a gap asks for one).

Close codes (after an `error` message): 4401 not signed in, or the session
ended while watching; 4403
`replay_locked` (with `date` and `opens_at`); 4404 no such player, or no
attempt of theirs that day; 4429 more messages than the attempt's socket
allows (`ATTEMPT_STREAM_ACTIONS_PER_SECOND`, `ATTEMPT_STREAM_BURST`), or
`too_many_watchers` (`LIVE_WATCHERS_MAX` watch it already), or too many
sockets from the client's address; 4503 `live_unavailable` when Redis (the
feed, the count of watchers) is away, or `database_unavailable` when the
database is.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
from dataclasses import dataclass
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.utils import timezone

from easyharp_site.dates import day_from_text, today
from easyharp_site.errors import ServiceError
from games import rules, selectors
from games.consumers import CLOSE_FLOOD, ActionBucket, PlayerSocket
from games.live import (
    AttemptFeed,
    player_group,
    watchers_count,
    watchers_group,
    watchers_join,
    watchers_leave,
)
from games.streaming import game_progress

logger = logging.getLogger(__name__)

CLOSE_NOT_SIGNED_IN = 4401
CLOSE_LOCKED = 4403
CLOSE_NOT_FOUND = 4404


@dataclass(frozen=True)
class Watched:
    """The attempt a socket watches, as stored when it was read."""

    attempt_id: int
    player: str
    deal_number: int
    log: str
    started_at: datetime.datetime
    closed_at: datetime.datetime | None
    # The game that closed it (None while it is open).
    game_id: int | None
    # That game's time as the boards show it (the server's, from start to submission).
    duration_ms: int | None
    # A hint was asked during it: its game is on no board.
    assisted: bool
    # The viewer sees its table and actions; else its progress only.
    table_shown: bool


def attempt_watched(*, viewer: User, username: str, date: datetime.date) -> Watched:
    """The player's attempt of `date` for `viewer`, or the `ServiceError` refusing it."""
    lock = selectors.day_lock(date=date, viewer=viewer)
    player = get_user_model().objects.filter(username=username, is_active=True).first()
    if player is None:
        raise ServiceError("player_not_found", f"There is no player {username!r}.")
    if lock is not None and player.pk != viewer.pk:
        raise lock.error(f"The attempt of {username}")
    attempt = selectors.attempt_get(player=player, date=date)
    game = attempt.ranked_game
    return Watched(
        attempt_id=attempt.pk,
        player=player.get_username(),
        deal_number=attempt.daily.number,
        log=attempt.current_log,
        started_at=attempt.started_at,
        closed_at=attempt.closed_at,
        game_id=game.pk if game is not None else None,
        duration_ms=game.duration_ms if game is not None else None,
        assisted=attempt.assisted,
        table_shown=table_shown(finished=game is not None, date=date, own=player.pk == viewer.pk),
    )


def table_shown(*, finished: bool, date: datetime.date, own: bool) -> bool:
    """Whether a watcher sees the table of an attempt of `date`: once it is finished or
    its day is closed, and always their own; else its progress only (a live
    table of the running day would be a copying channel)."""
    return finished or own or date < today()


class WatchedTable:
    """The watched game as a socket's client has it: the snapshot's log, then each
    action the feed brought, in order."""

    def __init__(self, deal_number: int, log: str) -> None:
        self.game = rules.replay(rules.Deal(deal_number), log)

    @property
    def actions(self) -> int:
        return len(self.game.log)

    def take(self, first: int, actions: list[str]) -> list[str] | None:
        """Play the actions of a feed item (`first`, `first + 1`, ...) this table has not
        played yet; returns those, or None when the item leaves a gap or does not
        follow the table (the table must be read again)."""
        have = self.actions
        if first > have + 1:
            return None
        new = actions[have - first + 1 :]
        try:
            for token in new:
                self.game.play(token)
        except rules.ActionError:
            return None
        return new

    def progress(self) -> dict[str, Any]:
        """What the progress view shows of the game: no table, no action."""
        return game_progress(self.game)


def _watched_read(
    *, viewer: User, username: str, date: datetime.date
) -> tuple[Watched, WatchedTable, int]:
    """The attempt, its table and the count of its watchers, in one trip to the thread."""
    watched = attempt_watched(viewer=viewer, username=username, date=date)
    table = WatchedTable(watched.deal_number, watched.log)
    return watched, table, watchers_count(watched.attempt_id)


class AttemptWatchConsumer(PlayerSocket):
    """One socket watching one player's attempt (see the module docstring)."""

    watched: Watched | None = None
    table: WatchedTable | None = None
    counted: bool = False
    # The actions of the game whose progress the client has (the progress view).
    progress_sent: int = 0
    # The messages this socket may send (as the player's socket: a flood is closed).
    bucket: ActionBucket | None = None
    # Held while the socket reads and sends a snapshot, and while it passes on what
    # the feed brought, so that each follows the other whole.
    feed_lock: asyncio.Lock

    async def connect(self) -> None:
        self.feed_lock = asyncio.Lock()
        await self.accept()
        viewer = self.scope.get("user")
        if viewer is None or not viewer.is_authenticated:
            await self._refuse(CLOSE_NOT_SIGNED_IN, "not_authenticated", "Sign in to watch.")
            return
        kwargs = self.scope["url_route"]["kwargs"]
        try:
            date = day_from_text(kwargs["date"])
        except ValueError:
            if await self._sign_in(viewer.pk):
                await self._refuse(
                    CLOSE_NOT_FOUND, "no_attempt", f"{kwargs['date']!r} is not a date."
                )
            return
        try:
            watched = await self._sign_in_and_read(
                viewer.pk,
                lambda: attempt_watched(viewer=viewer, username=kwargs["username"], date=date),
            )
        except ServiceError as error:
            code = CLOSE_LOCKED if error.code == "replay_locked" else CLOSE_NOT_FOUND
            await self._refuse(code, error.code, error)
            return
        if watched is None:
            return
        if self.channel_layer is None:  # Redis is away: there is nothing to watch live
            await self._refuse_live()
            return
        async with self.feed_lock:
            # Listen first, then be counted (the player's socket passes on its stored
            # actions once it hears someone watches), then read the snapshot: every
            # action is in the snapshot or in what the feed brings after it.
            attempt_id = watched.attempt_id
            try:
                await self.channel_layer.group_add(watchers_group(attempt_id), self.channel_name)
                await AttemptFeed.current().watch(attempt_id, self)
                count = await database_sync_to_async(watchers_join)(attempt_id)
            except Exception:
                logger.warning("Could not watch attempt %s live", attempt_id, exc_info=True)
                AttemptFeed.current().unwatch(attempt_id, self)
                await self._refuse_live()
                return
            if count is None:
                AttemptFeed.current().unwatch(attempt_id, self)
                await self.channel_layer.group_discard(
                    watchers_group(attempt_id), self.channel_name
                )
                await self._refuse(
                    CLOSE_FLOOD,
                    "too_many_watchers",
                    "Too many watch this attempt: try again later.",
                )
                return
            self.watched = watched
            self.counted = True
            await self.channel_layer.group_send(
                player_group(attempt_id), {"type": "attempt.watchers", "count": count}
            )
            await self._send_snapshot()

    async def _send_snapshot(self) -> None:
        """Read the attempt again and send it whole (with `feed_lock` held)."""
        assert self.watched is not None
        kwargs = self.scope["url_route"]["kwargs"]
        try:
            watched, table, count = await database_sync_to_async(_watched_read)(
                viewer=self.scope["user"],
                username=self.watched.player,
                date=day_from_text(kwargs["date"]),
            )
        except ServiceError as error:  # the player was banned, or deleted, meanwhile
            await self._refuse(CLOSE_NOT_FOUND, error.code, error)
            return
        self.watched, self.table = watched, table
        self.progress_sent = table.actions
        # A finished game's clock stops at the time the boards show, not at the
        # moment its row was written, a little after it.
        if watched.duration_ms is not None:
            elapsed_ms = watched.duration_ms
        else:
            end = watched.closed_at or timezone.now()
            elapsed_ms = max(0, int((end - watched.started_at).total_seconds() * 1000))
        await self._send(
            json.dumps(
                {
                    "type": "snapshot",
                    "view": "table" if watched.table_shown else "progress",
                    "player": watched.player,
                    "date": kwargs["date"],
                    "deal": rules.Deal(watched.deal_number).code if watched.table_shown else None,
                    "log": watched.log if watched.table_shown else None,
                    **table.progress(),
                    "elapsed_ms": elapsed_ms,
                    "status": "open" if watched.closed_at is None else "closed",
                    "game": watched.game_id,
                    "assisted": watched.assisted,
                    "watchers": count,
                }
            )
        )

    async def actions_passed(
        self,
        first: int,
        actions: list[str],
        elapsed_ms: int,
        progress: dict[str, Any] | None = None,
    ) -> None:
        """Actions `first`, `first + 1`, ... the player's socket stored (from the feed):
        those the client lacks, as actions or as progress, or a snapshot at a gap.

        The progress view passes on the `progress` the player's socket sent with
        them, newer than what it sent before: an item it missed (a lost or dropped
        message) needs no new snapshot, since the next one says where the game is.
        """
        async with self.feed_lock:
            watched, table = self.watched, self.table
            if watched is None or table is None or self.closed:
                return
            if not watched.table_shown and progress is not None:
                if progress["actions"] > self.progress_sent:
                    self.progress_sent = progress["actions"]
                    message = {"type": "progress", **progress, "elapsed_ms": elapsed_ms}
                    await self._send(json.dumps(message))
                return
            new = table.take(first, actions)
            if new is None:
                await self._send_snapshot()
                return
            if not new:
                return
            if watched.table_shown:
                message = {
                    "type": "actions",
                    "from": table.actions - len(new) + 1,
                    "actions": new,
                    "elapsed_ms": elapsed_ms,
                }
            else:
                message = {"type": "progress", **table.progress(), "elapsed_ms": elapsed_ms}
                self.progress_sent = table.actions
            await self._send(json.dumps(message))

    async def attempt_closed(self, event: dict[str, Any]) -> None:
        """The attempt was submitted: its game is stored, nothing more will move, and
        its table may be shown."""
        async with self.feed_lock:
            await self._send(json.dumps({"type": "closed", "game": event["game"]}))
            if self.watched is not None:
                await self._send_snapshot()

    async def attempt_reset(self, event: dict[str, Any]) -> None:
        """The stored game changed under the stream, or actions were lost: a fresh snapshot."""
        async with self.feed_lock:
            if self.watched is not None and not self.closed:
                await self._send_snapshot()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.bucket is None:
            self.bucket = ActionBucket(
                settings.ATTEMPT_STREAM_ACTIONS_PER_SECOND, settings.ATTEMPT_STREAM_BURST
            )
        if not self.bucket.take():
            await self._refuse(CLOSE_FLOOD, "too_many_messages", "Too many messages: slow down.")
            return
        if text_data is not None and len(text_data) < 64 and '"ping"' in text_data:
            await self._send('{"type":"pong"}')
            return
        if text_data is not None and len(text_data) < 64 and '"snapshot"' in text_data:
            await self.attempt_reset({"type": "attempt.reset"})
            return
        await self._send(
            json.dumps(
                {
                    "type": "error",
                    "error": {
                        "code": "unknown_message",
                        "message": 'Send {"type": "ping"} or {"type": "snapshot"}.',
                    },
                }
            )
        )

    async def disconnect(self, code: int) -> None:
        self.closed = True
        self._stop_listening()
        watched = self.watched
        if watched is None:
            return
        AttemptFeed.current().unwatch(watched.attempt_id, self)
        group = watchers_group(watched.attempt_id)
        await self._live(lambda layer: layer.group_discard(group, self.channel_name))
        if self.counted:
            self.counted = False
            count = await database_sync_to_async(watchers_leave)(watched.attempt_id)
            message = {"type": "attempt.watchers", "count": count}
            player = player_group(watched.attempt_id)
            await self._live(lambda layer: layer.group_send(player, message))
