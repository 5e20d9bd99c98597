"""The ranked attempt's socket: `ws/daily/<date>/attempt/`, each action as it is played.

The signed-in player's page sends each action of its open attempt here as it
is played. The server checks it against the attempt's table (kept in memory
for the socket's life, `games.streaming`), stores it with the time it arrived
(the server's clock, which the review reads) and acknowledges it once it is in
the database (`games.batches`): an acknowledged action is never lost. Its
watchers get the stored actions through the process's feed (`games.live`).

Protocol (JSON text frames; `n` is an action's 1-based place in the log):

- server, on connect: `{"type": "state", "date", "deal", "log", "actions",
  "version", "elapsed_ms", "watchers"}`, the stored game, which the client's
  next action follows (`actions + 1`).
- client: `{"type": "action", "n", "action"}` (a token of the notation).
- server: `{"type": "ack", "n", "version"}`: actions 1..n are stored (the
  attempt at `version`, which a `PATCH` may name). An action sent again with a
  number already stored and the same token is acknowledged again.
- server: `{"type": "refused", "n", "error": {"code", "message", ...}}` at once:
  `illegal_action` (the engine's `index`, `token`, `reason`, `reason_code`,
  `params`, as the REST API says it), `action_conflict` (another action is
  stored at `n`: `stored`), `out_of_order` (a gap: `next` is the next
  number), `log_too_long`. Nothing is stored.
- server: a new `state` when another device changed the stored game (a `PATCH`
  or a second socket); the actions this socket held are then checked again on
  top of it, each acknowledged or refused.
- server: `{"type": "watchers", "count"}` whenever the number of players
  watching this attempt live changes (`games.live`); `state` carries it too.
- `{"type": "ping"}` gets `{"type": "pong"}`; a message too large, not JSON or
  not understood gets `{"type": "error", "error": {"code", "message"}}`.

Close codes (after an `error` message saying why): 4401 not signed in, or the
session the socket signed in with ended while it was open (as the live
boards' sockets, `easyharp_site.accounts.live`); 4403 banned; 4404 no attempt
of that day (not started, not a date, not served); 4409 the attempt is closed
(submitted) or its day is over; 4429 more messages than
`ATTEMPT_STREAM_ACTIONS_PER_SECOND` sustained (with a burst of
`ATTEMPT_STREAM_BURST`, enough to replay a queue played offline), or too many
sockets from the client's address (`easyharp_site.sockets.SocketGuard`); 4503
the database failed or cannot be reached (connect again: nothing acknowledged
is lost); 1012 the server process is stopping (a restart: connect again after
a random wait, to another process; the actions it accepted are stored before
it stops). With Redis away the socket still plays: it stores and acknowledges
each action, and only the watchers' count and the watchers' feed are skipped
(logged).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import functools
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from channels.db import database_sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import BaseChannelLayer
from channels.utils import await_many_dispatch
from django.conf import settings
from django.contrib.auth.models import User
from django.utils import timezone

from easyharp_site import draining
from easyharp_site.accounts.live import PlayerSockets, session_player_id
from easyharp_site.dates import day_from_text, today
from easyharp_site.errors import ServiceError
from easyharp_site.layer import channel_opened
from easyharp_site.sockets import (
    CLOSE_UNAVAILABLE,
    LIVE_MESSAGE,
    HandlersWithoutHop,
    MessageRefused,
    client_message,
)
from games import live, rules, selectors, services
from games.batches import StreamWriter
from games.streaming import ActionStream, Offer

logger = logging.getLogger(__name__)

T = TypeVar("T")

CLOSE_NOT_SIGNED_IN = 4401
CLOSE_BANNED = 4403
CLOSE_NO_ATTEMPT = 4404
CLOSE_ATTEMPT_OVER = 4409
CLOSE_FLOOD = 4429
CLOSE_SAVE_FAILED = CLOSE_UNAVAILABLE

# A refusal of the connection or of a write, by its error code.
CLOSE_CODES = {
    "player_banned": CLOSE_BANNED,
    "attempt_closed": CLOSE_ATTEMPT_OVER,
    "day_closed": CLOSE_ATTEMPT_OVER,
}


@dataclass(frozen=True)
class OpenAttempt:
    """What a socket needs of the attempt it streams to."""

    attempt_id: int
    deal_number: int
    started_at: datetime.datetime
    log: list[str]
    times: list[int]
    version: int


def attempt_stream_open(*, player: User, date: datetime.date) -> OpenAttempt:
    """The player's open attempt of `date` (today), or the `ServiceError` that refuses it."""
    if not player.is_active:
        raise ServiceError("player_banned", "This account is banned.")
    attempt = selectors.attempt_get(player=player, date=date)
    game = attempt.ranked_game
    if game is not None:
        raise ServiceError(
            "attempt_closed",
            "This attempt was submitted; its game is stored and can no longer change.",
            game=game.pk,
        )
    if attempt.daily.date != today():
        raise ServiceError("day_closed", f"The day {date.isoformat()} is over.")
    return OpenAttempt(
        attempt_id=attempt.pk,
        deal_number=attempt.daily.number,
        started_at=attempt.started_at,
        log=attempt.log.split(),
        times=attempt.action_times(),
        version=attempt.version,
    )


class ActionBucket:
    """A token bucket: `rate` actions a second sustained, `burst` at once."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self.tokens = float(burst)
        self.at = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class PlayerSocket(HandlersWithoutHop, AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    """A socket signed in as a player (by the session cookie), closed with 4401 as soon
    as that session ends, as the live boards' sockets are (`easyharp_site.accounts.live`).
    """

    player_id: int | None = None
    # Where the socket hears that its player's sessions ended.
    sessions: PlayerSockets | None = None
    closed: bool = False
    # None when the channel layer is away (Redis): the socket goes on without it.
    channel_layer: BaseChannelLayer | None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Channels' loop over the client's messages and the socket's channel, but with the
        channel layer away (Redis) over the client's alone: the player still plays,
        without the live extras (`_live`)."""
        self.scope = scope
        self.base_send = send
        receivers = [receive]
        opened = await channel_opened(self.channel_layer_alias, logger=logger)
        if opened is None:
            self.channel_layer = None
        else:
            self.channel_layer, self.channel_name = opened
            receivers.append(functools.partial(self.channel_layer.receive, self.channel_name))
        with contextlib.suppress(StopConsumer):
            await await_many_dispatch(receivers, self.dispatch)

    async def _live(self, call: Callable[[BaseChannelLayer], Awaitable[Any]]) -> bool:
        """Run `call` on the socket's channel layer; False without one, or when it fails
        (logged): the live extras are skipped, the player's game goes on."""
        if self.channel_layer is None:
            return False
        try:
            await call(self.channel_layer)
        except Exception:
            logger.warning("Live extras skipped on %s", self.scope.get("path"), exc_info=True)
            return False
        return True

    async def _refuse_live(self) -> None:
        """Close the socket (4503): what it is for needs the live extras, and they are away."""
        await self._refuse(CLOSE_UNAVAILABLE, "live_unavailable", LIVE_MESSAGE)

    async def _sign_in(self, player_id: int) -> bool:
        """Listen for the end of the player's sessions, then check that this one holds
        (so that an end committed meanwhile is heard); refuse the socket if it ended."""
        return await self._sign_in_and_read(player_id, lambda: True) is not None

    async def _sign_in_and_read(self, player_id: int, read: Callable[[], T]) -> T | None:
        """`_sign_in`, then `read()` (the socket's first read, never None) in the same
        database call: one trip to the database thread instead of two on every connect.
        None once the socket is refused (its session ended: `read` does not run);
        what `read` raises is raised."""
        self.sessions = PlayerSockets.current()
        await self.sessions.watch(player_id, self)
        self.player_id = player_id
        session = self.scope.get("session")
        key = None if session is None else session.session_key

        def check_then_read() -> T | None:
            return read() if session_player_id(session_key=key) == player_id else None

        value: T | None = await database_sync_to_async(check_then_read)()
        if value is None:
            await self._refuse(CLOSE_NOT_SIGNED_IN, "session_ended", "This session has ended.")
        return value

    async def _session_holds(self) -> bool:
        session = self.scope.get("session")
        key = None if session is None else session.session_key
        return bool(
            await database_sync_to_async(session_player_id)(session_key=key) == self.player_id
        )

    async def session_ended(self) -> None:
        """Sessions of this socket's player ended: close it (4401) if its own did."""
        if self.closed or await self._session_holds():
            return
        await self._refuse(
            CLOSE_NOT_SIGNED_IN, "session_ended", "This session has ended: sign in again."
        )

    def _stop_listening(self) -> None:
        sessions, self.sessions = self.sessions, None
        if sessions is not None and self.player_id is not None:
            sessions.unwatch(self.player_id, self)

    async def _send(self, text: str) -> None:
        if self.closed:
            return
        try:
            await self.send(text_data=text)
        except Exception:
            # The client went away before its answer (the server says so in its
            # own way); what it sent is stored all the same.
            self.closed = True

    async def _refuse(self, close_code: int, code: str, why: str | ServiceError) -> None:
        message = why if isinstance(why, str) else why.message
        extra = {} if isinstance(why, str) else _error_fields(code, why)
        await self._send(
            json.dumps({"type": "error", "error": {"code": code, "message": message, **extra}})
        )
        if not self.closed:
            self.closed = True
            self._stop_listening()
            await self.close(code=close_code)


class ActionSocket(PlayerSocket):
    """A player's socket that takes numbered actions (`{"type": "action", "n", "action"}`)
    and pings, each message checked the same way: its rate (a flood is closed, 4429),
    its size, JSON, and its shape. Once connected (`bucket` set), a subclass answers
    `on_action` and, if it likes, `on_ping`."""

    # Set once the socket is ready for messages; until then they are dropped.
    bucket: ActionBucket | None = None
    # The player's game as the socket holds it (`games.streaming`), and its write under way.
    stream: ActionStream | None = None
    writing: asyncio.Task[None] | None = None

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Answer a client message; anything unexpected gets an error, never a crash."""
        if self.bucket is None or self.closed:
            return
        if not self.bucket.take():
            await self._refuse(CLOSE_FLOOD, "too_many_messages", "Too many messages: slow down.")
            return
        try:
            content = client_message(text_data, settings.ATTEMPT_STREAM_MESSAGE_MAX_BYTES)
        except MessageRefused as refused:
            await self._send_error(refused.code, refused.message)
            return
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "ping":
            await self.on_ping()
            return
        number, token = (content.get("n"), content.get("action")) if kind == "action" else (0, 0)
        if type(number) is not int or number < 1 or not isinstance(token, str) or len(token) > 8:
            await self._send_error(
                "unknown_message",
                'Send {"type": "action", "n": <number from 1>, "action": <token>} '
                'or {"type": "ping"}.',
            )
            return
        await self.on_action(number, token)

    async def on_ping(self) -> None:
        await self._send('{"type":"pong"}')

    async def on_action(self, number: int, token: str) -> None:
        """Action `number` (`token` as sent, at most 8 characters) came."""
        raise NotImplementedError

    def _start_writing(self) -> None:
        """Store the actions accepted and not yet stored; one write at a time."""
        assert self.stream is not None
        if self.stream.unstored and (self.writing is None or self.writing.done()):
            self.writing = asyncio.create_task(self._write())
            draining.write_outliving_socket(self.writing)

    async def _write(self) -> None:
        """Store what waits, then acknowledge it; again while more came meanwhile."""
        stream = self.stream
        assert stream is not None
        while stream.unstored:
            log, times = stream.to_store()
            progress = stream.progress()  # of `log`, every action of it played
            try:
                result = await self._store(stream, log, times)
            except Exception:
                logger.exception("Could not store the actions sent on %s", self.scope.get("path"))
                await self._refuse(
                    CLOSE_SAVE_FAILED,
                    "save_failed",
                    "The actions could not be stored: connect again and send them again.",
                )
                return
            if result.outcome == "saved":
                before = stream.stored
                stream.stored_up_to(len(log), result.version)
                await self._send_ack(len(log))
                await self._stored(before, log, times, progress)
            elif result.outcome == "stale":
                offers = stream.rebase(result.log, result.times, result.version)
                await self._rebased()
                for offer in offers:
                    await self._answer(offer)
            else:
                await self._store_refused(result)
                return

    async def _store(self, stream: ActionStream, log: list[str], times: list[int]) -> Any:
        """Store `log` and its `times` (the whole game); a result with its `outcome`:
        "saved" (and the new `version`), "stale" (the stored `log`, `times`,
        `version` to go on from), or why nothing more is stored."""
        raise NotImplementedError

    async def _stored(
        self, before: int, log: list[str], times: list[int], progress: dict[str, Any]
    ) -> None:
        """Actions `before`+1 to the end of `log` are stored and acknowledged; `progress`
        is the game after them (`games.streaming.game_progress`)."""

    async def _rebased(self) -> None:
        """The stream went back to the stored game (another socket wrote first)."""

    async def _store_refused(self, result: Any) -> None:
        """Nothing more of this game can be stored (`result.outcome` says why)."""
        raise NotImplementedError

    async def _answer(self, offer: Offer) -> None:
        """Tell the client what became of an action, unless its answer is the next write's."""
        if offer.outcome == "stored":
            await self._send_ack(offer.number)
        elif offer.outcome == "refused":
            assert offer.error is not None
            await self._send_refused(offer.number, offer.error)

    async def _send_ack(self, number: int) -> None:
        assert self.stream is not None
        await self._send(f'{{"type":"ack","n":{number},"version":{self.stream.version}}}')

    async def _send_refused(self, number: int, error: ServiceError) -> None:
        refusal = {"type": "refused", "n": number, "error": _error_fields(error.code, error)}
        await self._send(json.dumps(refusal))

    async def _send_error(self, code: str, message: str) -> None:
        await self._send(json.dumps({"type": "error", "error": {"code": code, "message": message}}))


class AttemptConsumer(ActionSocket):
    """One socket streaming one player's open attempt (see the module docstring)."""

    attempt: OpenAttempt | None = None
    # Players watching this attempt live (`games.live`): its stored actions go to them.
    watchers: int = 0

    async def connect(self) -> None:
        # Accept first: a close before the handshake reaches the browser without our code.
        await self.accept()
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self._refuse(
                CLOSE_NOT_SIGNED_IN, "not_authenticated", "Sign in to play the ranked attempt."
            )
            return
        text = self.scope["url_route"]["kwargs"]["date"]
        try:
            date = day_from_text(text)
        except ValueError:
            if await self._sign_in(user.pk):
                await self._refuse(CLOSE_NO_ATTEMPT, "no_attempt", f"{text!r} is not a date.")
            return
        try:
            attempt = await self._sign_in_and_read(
                user.pk, lambda: attempt_stream_open(player=user, date=date)
            )
        except ServiceError as error:
            await self._refuse(CLOSE_CODES.get(error.code, CLOSE_NO_ATTEMPT), error.code, error)
            return
        if attempt is None:
            return
        self.attempt = attempt
        self.stream = ActionStream(
            deal_number=attempt.deal_number,
            log=attempt.log,
            times=attempt.times,
            version=attempt.version,
            max_actions=settings.GAME_MAX_ACTIONS,
        )
        self.bucket = ActionBucket(
            settings.ATTEMPT_STREAM_ACTIONS_PER_SECOND, settings.ATTEMPT_STREAM_BURST
        )
        # Hear the watchers' count before reading it: no change falls between. With the
        # live extras away nobody is heard watching, and the player plays on.
        group = live.player_group(attempt.attempt_id)
        if await self._live(lambda layer: layer.group_add(group, self.channel_name)):
            try:
                self.watchers = await database_sync_to_async(live.watchers_count)(
                    attempt.attempt_id
                )
            except Exception:
                logger.warning("Could not read the count of watchers", exc_info=True)
        await self._send_state()

    async def attempt_watchers(self, event: dict[str, Any]) -> None:
        """The number of players watching changed: the player is told.

        The count is read again from the shared cache, not taken from the message:
        two changes told by two processes may come in either order. Once someone
        watches, the stored actions are passed on once more from the first: what
        was stored while nobody was heard watching reaches the new watcher too
        (each watching socket leaves out what its snapshot holds, `games.watch`).
        """
        assert self.attempt is not None
        try:
            count = await database_sync_to_async(live.watchers_count)(self.attempt.attempt_id)
        except Exception:  # the cache is away: the message's count is the best known
            logger.warning("Could not read the count of watchers", exc_info=True)
            count = int(event["count"])
        # No await from here to the catch-up: an action stored meanwhile is either in
        # it or passed on by `_stored`, which reads the count after it is stored.
        before, self.watchers = self.watchers, count
        if before <= 0 < count and self.stream is not None and self.stream.stored:
            stored = self.stream.stored
            everything = stored == len(self.stream.tokens)
            live.actions_stored(
                self.attempt.attempt_id,
                1,
                self.stream.tokens[:stored],
                self.stream.times[stored - 1],
                # Else the watchers play the actions on their table for it.
                progress=self.stream.progress() if everything else None,
            )
        await self._send(json.dumps({"type": "watchers", "count": count}))

    async def _tell_watchers(self, message: dict[str, Any]) -> None:
        """Tell the attempt's watchers (a reset), if any watch."""
        if self.watchers <= 0 or self.attempt is None:
            return
        # Watchers miss a move when it fails; the player's game is stored all the same.
        group = live.watchers_group(self.attempt.attempt_id)
        await self._live(lambda layer: layer.group_send(group, message))

    async def disconnect(self, code: int) -> None:
        # A write on its way goes on: what was accepted is still stored.
        self.closed = True
        self._stop_listening()
        if self.attempt is not None:
            group = live.player_group(self.attempt.attempt_id)
            await self._live(lambda layer: layer.group_discard(group, self.channel_name))

    async def on_action(self, number: int, token: str) -> None:
        assert self.stream is not None
        await self._answer(self.stream.offer(number, token, at_ms=self._elapsed_ms()))
        self._start_writing()

    def _elapsed_ms(self) -> int:
        assert self.attempt is not None
        return max(0, int((timezone.now() - self.attempt.started_at).total_seconds() * 1000))

    async def _store(self, stream: ActionStream, log: list[str], times: list[int]) -> Any:
        assert self.attempt is not None and self.player_id is not None
        save = services.StreamedSave(
            attempt_id=self.attempt.attempt_id,
            player_id=self.player_id,
            version=stream.version,
            log=log,
            times=times,
        )
        return await StreamWriter.current().save(save)

    async def _stored(
        self, before: int, log: list[str], times: list[int], progress: dict[str, Any]
    ) -> None:
        if self.watchers > 0 and self.attempt is not None:
            live.actions_stored(
                self.attempt.attempt_id,
                before + 1,
                log[before:],
                times[-1] if times else 0,
                progress=progress,
            )

    async def _rebased(self) -> None:
        await self._send_state()
        await self._tell_watchers({"type": "attempt.reset"})

    async def _store_refused(self, result: Any) -> None:
        error = ServiceError(result.outcome, _OVER[result.outcome], game=result.game)
        await self._refuse(CLOSE_CODES[result.outcome], result.outcome, error)

    async def _send_state(self) -> None:
        assert self.stream is not None and self.attempt is not None
        stored = self.stream.tokens[: self.stream.stored]
        await self._send(
            json.dumps(
                {
                    "type": "state",
                    "date": self.scope["url_route"]["kwargs"]["date"],
                    "deal": rules.Deal(self.attempt.deal_number).code,
                    "log": " ".join(stored),
                    "actions": len(stored),
                    "version": self.stream.version,
                    "elapsed_ms": self._elapsed_ms(),
                    "watchers": self.watchers,
                }
            )
        )


_OVER = {
    "attempt_closed": "This attempt was submitted; its game is stored and can no longer change.",
    "day_closed": "The day is over: its ranked attempt can no longer be played.",
    "player_banned": "This account is banned: it can no longer play ranked games.",
}


def _error_fields(code: str, error: ServiceError) -> dict[str, Any]:
    """The error as the REST API's body says it (`code`, `message` and its fields)."""
    return {"code": code, "message": error.message, **error.extra}
