"""A race's channel-layer group: every change of a race reaches the sockets of its
players, and of those who watch it from its page without being in it.

The services call `race_changed` after their commit (a join, a leave, the
start, the end): it reads the race's state once and sends it to the group,
whose sockets (`races.consumers`) pass it on, a watcher's as the watched
state (no deal before the end): one send per change whoever watches. Stored
actions are announced by the sockets that stored them, through their event
loop's `RaceAnnouncer`: at most RACE_UPDATES_PER_SECOND times a second for a
race, the last change always sent, so that a race of eight players at play
costs a few reads and messages a second rather than one per action
(docs/PERFORMANCE.md). A socket also reads the state itself on each heartbeat, so
a player who stopped answering shows as away without anyone's action.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, ClassVar

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.utils import timezone

from easyharp_site.cache import shared_count_change, shared_place_take
from easyharp_site.layer import announce_soon
from races import selectors

logger = logging.getLogger(__name__)


def race_group(race_id: int) -> str:
    """The group of the sockets of a race's players and watchers."""
    return f"races.race.{race_id}"


# How long a count of a race's watchers is kept without a change (a process that
# died while its sockets watched leaves them counted until then).
WATCHERS_COUNT_SECONDS = 24 * 3600


def race_watchers_join(race_id: int) -> bool:
    """Count a watcher's socket of a race in, over every server process; False (nothing
    counted) when LIVE_WATCHERS_MAX watch it already."""
    return (
        shared_place_take(
            _watchers_key(race_id),
            limit=settings.LIVE_WATCHERS_MAX,
            seconds=WATCHERS_COUNT_SECONDS,
        )
        is not None
    )


def race_watchers_leave(race_id: int) -> None:
    """Count a watcher's socket of a race out."""
    shared_count_change(_watchers_key(race_id), -1, seconds=WATCHERS_COUNT_SECONDS)


def _watchers_key(race_id: int) -> str:
    return f"races:race:{race_id}:watchers"


def race_changed(race_id: int) -> None:
    """Send the race's state to its sockets (in `on_commit`). Never raises: with the
    channel layer down they miss it, and their next heartbeat reads it."""
    failed = f"The players of race {race_id} were not told of a change"
    try:
        layer = get_channel_layer()
        if layer is None:
            return
        race, racers = selectors.race_with_racers(race_id=race_id)
        message = {
            "type": "race.state",
            "state": selectors.race_state(race=race, now=timezone.now(), racers=racers),
        }
    except Exception:
        logger.warning(failed, exc_info=True)
        return
    timeout: float = settings.LIVE_BOARD_SEND_TIMEOUT
    announce_soon(
        asyncio.wait_for(layer.group_send(race_group(race_id), message), timeout),
        logger=logger,
        failed=failed,
    )


class RaceAnnouncer:
    """Announces races whose players stored actions, each at most
    RACE_UPDATES_PER_SECOND times a second; one per event loop (`current()`).

    A race announced longer ago than the interval is sent at once; one announced
    since waits for the interval's end, and every announcement meanwhile joins
    that one send, which reads the race after all of them were stored.
    """

    _instances: ClassVar[weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, RaceAnnouncer]] = (
        weakref.WeakKeyDictionary()
    )

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        send: Callable[[int], Coroutine[Any, Any, None]] | None = None,
    ) -> None:
        self._loop = loop
        # What sends a race's state: `race_changed`, in the database's thread.
        self._send_race = send or database_sync_to_async(race_changed)
        self._interval = 1 / settings.RACE_UPDATES_PER_SECOND
        # When each race was last sent (the loop's clock), and the sends waiting.
        self._sent_at: dict[int, float] = {}
        self._waiting: dict[int, asyncio.TimerHandle] = {}
        self._sending: set[asyncio.Task[None]] = set()

    @classmethod
    def current(cls) -> RaceAnnouncer:
        loop = asyncio.get_running_loop()
        announcer = cls._instances.get(loop)
        if announcer is None:
            announcer = cls._instances[loop] = cls(loop)
        return announcer

    def changed(self, race_id: int) -> None:
        """Race `race_id` changed (its players' actions stored): send it soon."""
        if race_id in self._waiting:
            return
        due = self._sent_at.get(race_id, float("-inf")) + self._interval
        self._waiting[race_id] = self._loop.call_at(
            max(due, self._loop.time()), self._send, race_id
        )

    def _send(self, race_id: int) -> None:
        del self._waiting[race_id]
        now = self._loop.time()
        self._sent_at[race_id] = now
        if len(self._sent_at) > 1_000:  # bounded: forget the races that went quiet
            self._sent_at = {
                race: when for race, when in self._sent_at.items() if now - when < self._interval
            }
        task = self._loop.create_task(self._send_race(race_id))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)
