"""A race's socket: `ws/races/<code>/`, for each of its players, and for anyone else who
opens the race's page (signed in or not), who watches it.

The player's page sends each action here as it is played. The server checks
it against the player's table (kept in memory for the socket's life,
`games.streaming`: one action's work, not a replay), stores it with the time
it arrived since the race's start, and acknowledges it once it is in the
database (the writes of the process's race sockets grouped, `games.batches`).
Every change of the race (a player in or out, the start, stored actions, the
end) reaches every player's socket as the race's `race` state: each player's
progress, never a table or an action (a few times a second at most while
actions are stored, `races.live.RaceAnnouncer`).

Whoever opens the race's link without being in it watches: their socket
hears the same changes, in the watched state (`races.selectors.
race_state_watched`: the same players and progress, but no deal until the
race is over: the socket takes the deal out of each state before it sends
it on); it stores nothing and writes nothing, and a player's socket whose
player left the lobby becomes a watcher's.

Protocol (JSON text frames; `n` is an action's 1-based place in the log):

- server, on connect: `{"type": "welcome", "you", "log", "actions", "version",
  "race", "server_now"}`: the player's stored game (the page rebuilds its
  table from it and sends what follows, `actions + 1` on) and the race.
- server: `{"type": "race", "race", "server_now"}` whenever the race changed,
  and in answer to each heartbeat. `race` is `races.selectors.race_state`:
  `status` (`lobby`, `countdown`, `running`, `over`), `starts_at`, `ends_at`
  (the server's clock: `server_now` says what it reads now), `deal` from
  the countdown on, `winner`, `rematch` (once over: the code of the race its
  players made to play again, else null), and `players` in race order (`place`, `score`,
  `moves`, `foundations`, `time_ms`, `won`, `left`, `away`, `game`).
- server, on connect, to a watcher: `{"type": "watching", "you", "race",
  "server_now"}` (`you` is null when not signed in), then `race` messages as
  a player's socket gets them, with the watched state.
- client: `{"type": "action", "n", "action"}` (a token of the notation); a
  watcher's is refused with `not_in_race`.
- server: `{"type": "ack", "n", "version"}` once actions 1..n are stored; an
  action sent again with a number already stored and the same token is
  acknowledged again.
- server: `{"type": "refused", "n", "error": {"code", "message", ...}}` at once:
  `illegal_action` (the engine's `index`, `token`, `reason`, `reason_code`,
  `params`), `action_conflict` (another action is stored at `n`: `stored`),
  `out_of_order` (a gap: `next`), `log_too_long`, `race_not_started` (before
  the countdown's end), `race_over`, `left_race`, `too_fast` (a move that
  makes a burst or a run at a machine's pace, `games.review.pace_refusal`:
  `retry_after_ms` says when it would count; the limits are `burst_moves`
  within `burst_ms`, and `run_moves` at `run_ms_per_move` each). Nothing is
  stored.
- client: `{"type": "ping"}`, the heartbeat (every 10 s): the player is not
  away; the server answers with the race's state.
- a message too large, not JSON or not understood gets `{"type": "error",
  "error": {"code", "message"}}`.

Close codes (after an `error` message): 4401 the session the socket signed in
with ended (a watcher who is not signed in has none); 4404 no such race;
4429 more messages than `ATTEMPT_STREAM_ACTIONS_PER_SECOND` sustained
(`ATTEMPT_STREAM_BURST` at once), or `too_many_watchers` for a watcher
(`LIVE_WATCHERS_MAX` watch the race already), or too many sockets from the
client's address; 4503 the database failed or cannot be reached (connect
again: nothing acknowledged is lost), or, to a watcher, `live_unavailable`:
Redis is away. A player's socket plays on with Redis away: its actions are
stored and acknowledged, and the race's changes reach it with each
heartbeat's answer instead of as they happen (logged).
"""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
from dataclasses import dataclass, replace
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth.models import User
from django.utils import timezone

from easyharp_site.errors import ServiceError
from games.batches import StreamWriter
from games.consumers import CLOSE_FLOOD, ActionBucket, ActionSocket
from games.review import (
    BURST_WINDOW_MOVES,
    BURST_WINDOW_MS,
    RUN_MAX_MS_PER_MOVE,
    RUN_MOVES,
    pace_refusal,
)
from games.streaming import ActionStream
from races import selectors, services
from races.live import RaceAnnouncer, race_group, race_watchers_join, race_watchers_leave
from races.models import Race

logger = logging.getLogger(__name__)

CLOSE_NO_RACE = 4404

# Refusals of a write, by the service's outcome.
REFUSALS = {
    "not_started": ("race_not_started", "The race has not started yet: wait for the countdown."),
    "race_over": ("race_over", "The race is over: no action counts after its end."),
    "left_race": ("left_race", "You left this race."),
    "not_in_race": ("not_in_race", "You are not in this race."),
}


@dataclass(frozen=True)
class Seat:
    """A socket's player in its race, as stored when it connected."""

    race_id: int
    deal_number: int
    starts_at: datetime.datetime | None
    log: list[str]
    times: list[int]
    version: int


def race_seat(*, player: User | None, code: str) -> tuple[Race, Seat | None, dict[str, Any]]:
    """The race `code`, the player's seat in it and the state they see; a watcher (not in
    it, or not signed in) has no seat and sees the watched state, and writes nothing.
    A `ServiceError` when there is no such race. For a player, a race whose time ran
    out is ended here first."""
    race = selectors.race_get(code=code)
    racer = None if player is None else selectors.racer_get(race=race, player=player)
    if racer is None:
        state = selectors.race_state_watched(selectors.race_state(race=race, now=timezone.now()))
        return race, None, state
    assert player is not None
    if services.race_end_if_due(race_id=race.pk):
        race = selectors.race_get(code=code)
    services.racer_seen(race_id=race.pk, player_id=player.pk)
    seat = Seat(
        race_id=race.pk,
        deal_number=race.deal_number,
        starts_at=race.starts_at,
        log=racer.log.split(),
        times=[int(time) for time in racer.times],
        version=racer.version,
    )
    return race, seat, selectors.race_state(race=race, now=timezone.now())


def race_watched(*, race_id: int) -> dict[str, Any]:
    """The race's state as a watcher sees it (a read: a watcher's heartbeat writes nothing)."""
    race = selectors.race_by_id(race_id=race_id)
    return selectors.race_state_watched(selectors.race_state(race=race, now=timezone.now()))


def race_heartbeat(*, race_id: int, player_id: int) -> dict[str, Any]:
    """The player is here; the race's state (ended first if its time ran out)."""
    services.race_end_if_due(race_id=race_id)
    services.racer_seen(race_id=race_id, player_id=player_id)
    race = selectors.race_by_id(race_id=race_id)
    return selectors.race_state(race=race, now=timezone.now())


def _server_now() -> str:
    return timezone.now().isoformat().replace("+00:00", "Z")


class RaceConsumer(ActionSocket):
    """One player's socket in one race, or a watcher's (see the module docstring)."""

    seat: Seat | None = None
    # The race a watcher's socket watches (it has no seat).
    watched: int | None = None
    you: str | None = None
    ending: asyncio.Task[None] | None = None
    # The race's status as this socket last heard it.
    status: str = "lobby"

    async def connect(self) -> None:
        await self.accept()
        user = self.scope.get("user")
        signed_in = user is not None and user.is_authenticated
        code = self.scope["url_route"]["kwargs"]["code"]
        try:
            if signed_in:
                seated = await self._sign_in_and_read(
                    user.pk, lambda: race_seat(player=user, code=code)
                )
            else:
                seated = await database_sync_to_async(race_seat)(player=None, code=code)
        except ServiceError as error:
            await self._refuse(CLOSE_NO_RACE, error.code, error)
            return
        if seated is None:
            return
        race, seat, state = seated
        self.you = user.get_username() if signed_in else None
        # A watcher's messages are the pings only, under the same limits.
        self.bucket = ActionBucket(
            settings.ATTEMPT_STREAM_ACTIONS_PER_SECOND, settings.ATTEMPT_STREAM_BURST
        )
        if seat is None:
            await self._watch(race.pk, state)
            return
        self.seat = seat
        # With the live extras away the player still plays; the race's changes come
        # with each heartbeat's answer instead.
        group = race_group(seat.race_id)
        await self._live(lambda layer: layer.group_add(group, self.channel_name))
        self._follow(state)
        await self._send(
            json.dumps(
                {
                    "type": "welcome",
                    "you": self.you,
                    "log": " ".join(seat.log),
                    "actions": len(seat.log),
                    "version": seat.version,
                    "race": state,
                    "server_now": _server_now(),
                }
            )
        )

    async def _watch(self, race_id: int, state: dict[str, Any]) -> None:
        """Watch the race: its group (each state passed on as watched), and its state
        now; refused (4429) when `LIVE_WATCHERS_MAX` sockets watch it already, and (4503)
        when the live extras are away (Redis): a watcher would see nothing move."""
        if self.channel_layer is None:
            await self._refuse_live()
            return
        try:
            joined = await database_sync_to_async(race_watchers_join)(race_id)
        except Exception:
            logger.warning("Could not count a watcher of race %s in", race_id, exc_info=True)
            await self._refuse_live()
            return
        if not joined:
            await self._refuse(
                CLOSE_FLOOD, "too_many_watchers", "Too many watch this race: try again later."
            )
            return
        self.watched = race_id
        await self.channel_layer.group_add(race_group(race_id), self.channel_name)
        message = {"type": "watching", "you": self.you, "race": state, "server_now": _server_now()}
        await self._send(json.dumps(message))

    async def _unseat(self, state: dict[str, Any]) -> None:
        """The player is no longer in the race (they left its lobby): watch it instead,
        before anything of the race's deal reaches this socket."""
        assert self.seat is not None
        race_id, self.seat, self.stream = self.seat.race_id, None, None
        await self._watch(race_id, selectors.race_state_watched(state))

    def _follow(self, state: dict[str, Any]) -> None:
        """Keep up with the race: its table once it has a deal, a timer for its end."""
        seat = self.seat
        assert seat is not None
        self.status = state["status"]
        if state["starts_at"] and seat.starts_at is None:
            # Started since the socket connected: the clock's zero is known now.
            self.seat = seat = replace(seat, starts_at=_moment(state["starts_at"]))
        if self.stream is None and state["status"] in {"countdown", "running"}:
            self.stream = ActionStream(
                deal_number=seat.deal_number,
                log=seat.log,
                times=seat.times,
                version=seat.version,
                max_actions=settings.GAME_MAX_ACTIONS,
            )
        if state["status"] != "over" and state["ends_at"] and self.ending is None:
            self.ending = asyncio.create_task(self._end_at(_moment(state["ends_at"])))

    async def _end_at(self, ends_at: datetime.datetime) -> None:
        """At the time limit, end the race (its players hear of it), even if nobody acts."""
        await asyncio.sleep(max(0.0, (ends_at - timezone.now()).total_seconds()) + 0.05)
        assert self.seat is not None
        try:
            await database_sync_to_async(services.race_end_if_due)(race_id=self.seat.race_id)
        except Exception:  # the next heartbeat, page or job ends it
            logger.warning("Could not end race %s", self.seat.race_id, exc_info=True)

    async def race_state(self, event: dict[str, Any]) -> None:
        """The race changed: passed on as it is to a player, as watched to a watcher."""
        state = event["state"]
        if self.seat is not None:
            if all(player["player"] != self.you for player in state["players"]):
                await self._unseat(state)
                return
            self._follow(state)
        elif self.watched is not None:
            state = selectors.race_state_watched(state)
        else:
            return
        await self._send_race(state)

    async def _send_race(self, state: dict[str, Any]) -> None:
        await self._send(json.dumps({"type": "race", "race": state, "server_now": _server_now()}))

    async def disconnect(self, code: int) -> None:
        # A write on its way goes on: what was accepted is still stored.
        self.closed = True
        self._stop_listening()
        if self.ending is not None:
            self.ending.cancel()
        race_id = self.seat.race_id if self.seat is not None else self.watched
        if race_id is not None:
            group = race_group(race_id)
            await self._live(lambda layer: layer.group_discard(group, self.channel_name))
        if self.watched is not None:
            await database_sync_to_async(race_watchers_leave)(self.watched)

    async def on_ping(self) -> None:
        """The heartbeat: the player is here; the race's state in answer (a watcher's: a
        read of the watched state, so a race whose time ran out shows as over)."""
        if self.seat is None:
            assert self.watched is not None
            await self._send_race(await database_sync_to_async(race_watched)(race_id=self.watched))
            return
        assert self.player_id is not None
        state = await database_sync_to_async(race_heartbeat)(
            race_id=self.seat.race_id, player_id=self.player_id
        )
        self._follow(state)
        await self._send_race(state)

    async def on_action(self, number: int, token: str) -> None:
        seat = self.seat
        if seat is None:
            await self._send_refused(number, ServiceError(*REFUSALS["not_in_race"]))
            return
        if self.status == "over":
            await self._send_refused(number, ServiceError(*REFUSALS["race_over"]))
            return
        if self.stream is None or seat.starts_at is None or timezone.now() < seat.starts_at:
            await self._send_refused(number, ServiceError(*REFUSALS["not_started"]))
            return
        at_ms = max(0, int((timezone.now() - seat.starts_at).total_seconds() * 1000))
        if number == len(self.stream.tokens) + 1:
            # A race is a contest: moves at a machine's pace are refused as they come.
            wait = pace_refusal(
                log=self.stream.tokens, times=self.stream.times, token=token.strip(), at_ms=at_ms
            )
            if wait is not None:
                await self._send_refused(number, _too_fast(wait))
                return
        await self._answer(self.stream.offer(number, token, at_ms=at_ms))
        self._start_writing()

    async def _store(self, stream: ActionStream, log: list[str], times: list[int]) -> Any:
        assert self.seat is not None and self.player_id is not None
        game = stream.game
        save = services.RaceSave(
            race_id=self.seat.race_id,
            player_id=self.player_id,
            version=stream.version,
            log=log,
            times=times,
            score=game.score,
            moves=game.moves,
            on_foundations=game.on_foundations,
            won=game.is_won,
        )
        return await race_writer().save(save)

    async def _stored(
        self, before: int, log: list[str], times: list[int], progress: dict[str, Any]
    ) -> None:
        assert self.seat is not None
        RaceAnnouncer.current().changed(self.seat.race_id)

    async def _store_refused(self, result: Any) -> None:
        # Nothing more of this game is stored: what waited is refused, and the
        # table here goes back to the stored game.
        assert self.stream is not None and self.seat is not None
        waiting = range(self.stream.stored + 1, len(self.stream.tokens) + 1)
        self.stream = ActionStream(
            deal_number=self.seat.deal_number,
            log=result.log,
            times=result.times,
            version=result.version,
            max_actions=settings.GAME_MAX_ACTIONS,
        )
        for number in waiting:
            await self._send_refused(number, ServiceError(*REFUSALS[result.outcome]))


def race_writer() -> StreamWriter[services.RaceSave, services.RaceSaveResult]:
    """The running loop's writer of race saves: on its own connections where its pool is
    open, else in a thread, as attempts write (`games.batches`)."""
    return StreamWriter.choose(
        on_loop=services.races_actions_save_on_loop, in_thread=services.races_actions_save
    )


def _too_fast(wait_ms: int) -> ServiceError:
    return ServiceError(
        "too_fast",
        f"Moves came faster than a person plays: this one counts if it comes "
        f"{wait_ms} ms from now or later. Send it again then.",
        retry_after_ms=wait_ms,
        burst_moves=BURST_WINDOW_MOVES,
        burst_ms=BURST_WINDOW_MS,
        run_moves=RUN_MOVES,
        run_ms_per_move=RUN_MAX_MS_PER_MOVE,
    )


def _moment(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text)
