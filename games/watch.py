"""Watching a player's ranked attempt live: `ws/daily/<date>/players/<username>/attempt/`.

The table moves as the player plays: the player's socket (`games.consumers`)
passes each stored action to the watchers through the process's feed
(`games.live.AttemptFeed`, within `GATHER_SECONDS`), and the player is told
how many watch. Only a viewer who may see the
day's games watches (the no-spoiler rule, `games.selectors.day_lock`): until
the day closes, a player who has finished their own ranked attempt of the
day; before that the socket is refused with `replay_locked`.

Protocol (server to client, JSON text frames):

- `{"type": "snapshot", "player", "date", "deal", "log", "actions",
  "elapsed_ms", "status", "game", "assisted", "watchers"}` on connect (`game`:
  the game that closed the attempt, null while it is open), and again when
  the stored game changed under the stream (another device of the player) or
  a hint made it assisted.
- `{"type": "actions", "from", "actions", "elapsed_ms"}`: actions `from`,
  `from + 1`, ... were played (a client ignores those it has).
- `{"type": "closed", "game"}` once the attempt is submitted (its game).
- `{"type": "pong"}` in answer to `{"type": "ping"}`.

Close codes (after an `error` message): 4401 not signed in, or the session
ended while watching; 4403
`replay_locked` (with `date` and `opens_at`); 4404 no such player, or no
attempt of theirs that day; 4429 more messages than the attempt's socket
allows (`ATTEMPT_STREAM_ACTIONS_PER_SECOND`, `ATTEMPT_STREAM_BURST`), or
`too_many_watchers` (`LIVE_WATCHERS_MAX` watch it already).
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.utils import timezone

from easyharp_site.dates import day_from_text
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

CLOSE_NOT_SIGNED_IN = 4401
CLOSE_LOCKED = 4403
CLOSE_NOT_FOUND = 4404


@dataclass(frozen=True)
class Watched:
    """The attempt a socket watches, as stored when it was read."""

    attempt_id: int
    player: str
    deal: str
    log: str
    started_at: datetime.datetime
    closed_at: datetime.datetime | None
    # The game that closed it (None while it is open).
    game_id: int | None
    # A hint was asked during it: its game is on no board.
    assisted: bool


def attempt_watched(*, viewer: User, username: str, date: datetime.date) -> Watched:
    """The player's attempt of `date` for `viewer`, or the `ServiceError` refusing it."""
    lock = selectors.day_lock(date=date, viewer=viewer)
    player = get_user_model().objects.filter(username=username, is_active=True).first()
    if player is None:
        raise ServiceError("player_not_found", f"There is no player {username!r}.")
    if lock is not None and player.pk != viewer.pk:
        raise lock.error(f"The attempt of {username}")
    attempt = selectors.attempt_get(player=player, date=date)
    return Watched(
        attempt_id=attempt.pk,
        player=player.get_username(),
        deal=rules.Deal(attempt.daily.number).code,
        log=attempt.current_log,
        started_at=attempt.started_at,
        closed_at=attempt.closed_at,
        game_id=game.pk if (game := attempt.ranked_game) is not None else None,
        assisted=attempt.assisted,
    )


class AttemptWatchConsumer(PlayerSocket):
    """One socket watching one player's attempt (see the module docstring)."""

    watched: Watched | None = None
    counted: bool = False
    # The messages this socket may send (as the player's socket: a flood is closed).
    bucket: ActionBucket | None = None

    async def connect(self) -> None:
        await self.accept()
        viewer = self.scope.get("user")
        if viewer is None or not viewer.is_authenticated:
            await self._refuse(CLOSE_NOT_SIGNED_IN, "not_authenticated", "Sign in to watch.")
            return
        if not await self._sign_in(viewer.pk):
            return
        kwargs = self.scope["url_route"]["kwargs"]
        try:
            date = day_from_text(kwargs["date"])
        except ValueError:
            await self._refuse(CLOSE_NOT_FOUND, "no_attempt", f"{kwargs['date']!r} is not a date.")
            return
        try:
            watched = await database_sync_to_async(attempt_watched)(
                viewer=viewer, username=kwargs["username"], date=date
            )
        except ServiceError as error:
            code = CLOSE_LOCKED if error.code == "replay_locked" else CLOSE_NOT_FOUND
            await self._refuse(code, error.code, error)
            return
        # Listen before reading the count and the game: nothing falls between.
        await self.channel_layer.group_add(watchers_group(watched.attempt_id), self.channel_name)
        await AttemptFeed.current().watch(watched.attempt_id, self)
        count = await database_sync_to_async(watchers_join)(watched.attempt_id)
        if count is None:
            AttemptFeed.current().unwatch(watched.attempt_id, self)
            await self.channel_layer.group_discard(
                watchers_group(watched.attempt_id), self.channel_name
            )
            await self._refuse(
                CLOSE_FLOOD, "too_many_watchers", "Too many watch this attempt: try again later."
            )
            return
        self.watched = watched
        self.counted = True
        await self.channel_layer.group_send(
            player_group(watched.attempt_id), {"type": "attempt.watchers", "count": count}
        )
        await self._send_snapshot(watched, count)

    async def _send_snapshot(self, watched: Watched, count: int) -> None:
        end = watched.closed_at or timezone.now()
        await self._send(
            json.dumps(
                {
                    "type": "snapshot",
                    "player": watched.player,
                    "date": self.scope["url_route"]["kwargs"]["date"],
                    "deal": watched.deal,
                    "log": watched.log,
                    "actions": len(watched.log.split()),
                    "elapsed_ms": max(0, int((end - watched.started_at).total_seconds() * 1000)),
                    "status": "open" if watched.closed_at is None else "closed",
                    "game": watched.game_id,
                    "assisted": watched.assisted,
                    "watchers": count,
                }
            )
        )

    async def actions_passed(self, text: str) -> None:
        """Actions the player's socket stored (the `actions` message, from the feed)."""
        await self._send(text)

    async def attempt_closed(self, event: dict[str, Any]) -> None:
        """The attempt was submitted: its game is stored, nothing more will move."""
        await self._send(json.dumps({"type": "closed", "game": event["game"]}))

    async def attempt_reset(self, event: dict[str, Any]) -> None:
        """The stored game changed under the stream: a fresh snapshot."""
        if self.watched is None:
            return
        date = day_from_text(self.scope["url_route"]["kwargs"]["date"])
        watched = await database_sync_to_async(attempt_watched)(
            viewer=self.scope["user"], username=self.watched.player, date=date
        )
        count = await database_sync_to_async(watchers_count)(watched.attempt_id)
        await self._send_snapshot(watched, count)

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
        await self._send(
            json.dumps(
                {
                    "type": "error",
                    "error": {"code": "unknown_message", "message": 'Send {"type": "ping"}.'},
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
        await self.channel_layer.group_discard(
            watchers_group(watched.attempt_id), self.channel_name
        )
        if self.counted:
            self.counted = False
            count = await database_sync_to_async(watchers_leave)(watched.attempt_id)
            await self.channel_layer.group_send(
                player_group(watched.attempt_id), {"type": "attempt.watchers", "count": count}
            )
