"""Who watches a ranked attempt live, and the channel layer groups that carry it.

The attempt's socket (`games.consumers`) passes each stored action to the
watchers through the feed (`AttemptFeed`), and hears the watchers' count in
the player's group; a submission tells the watchers that the attempt is over
(`attempt_closed_announce`, after commit), in the watchers' group. The count
is kept in the shared cache, so that every server process reads the same one.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from typing import Any, Protocol

from django.conf import settings
from django.core.cache import cache

from easyharp_site.cache import shared_count_change, shared_place_take
from easyharp_site.layer import Gathering, SocketsByKey, announce_on_layer

logger = logging.getLogger(__name__)

# How long a count of watchers is kept without a change (a process that died
# while its sockets watched leaves them counted until then).
COUNT_SECONDS = 2 * 24 * 3600


def watchers_group(attempt_id: int) -> str:
    """The group of the sockets watching an attempt."""
    return f"games.attempt.{attempt_id}.watchers"


def player_group(attempt_id: int) -> str:
    """The group of the player's own sockets of an attempt (they hear the count)."""
    return f"games.attempt.{attempt_id}.player"


def _count_key(attempt_id: int) -> str:
    return f"games:attempt:{attempt_id}:watchers"


def watchers_count(attempt_id: int) -> int:
    """How many sockets watch the attempt now (over every server process)."""
    return max(0, int(cache.get(_count_key(attempt_id), 0)))


def watchers_join(attempt_id: int) -> int | None:
    """Count a watching socket in; returns the count, or None when LIVE_WATCHERS_MAX
    watch already (nothing is counted)."""
    return shared_place_take(
        _count_key(attempt_id), limit=settings.LIVE_WATCHERS_MAX, seconds=COUNT_SECONDS
    )


def watchers_leave(attempt_id: int) -> int:
    """Count a watching socket out; returns the count."""
    return shared_count_change(_count_key(attempt_id), -1, seconds=COUNT_SECONDS)


def attempt_closed_announce(attempt_id: int, game_id: int) -> None:
    """Tell the attempt's watchers that it was submitted (in `on_commit`; under the
    server, with the process's other submissions of the next
    `GATHER_SECONDS`, whose counts of watchers are read in one round trip).
    Never raises: with the channel layer down the watchers miss it, and the game
    is stored anyway."""
    _closed.add((attempt_id, game_id))


def _closed_gathered(closed: list[tuple[int, int]]) -> None:
    counts = cache.get_many([_count_key(attempt_id) for attempt_id, _ in closed])
    for attempt_id, game_id in closed:
        if int(counts.get(_count_key(attempt_id), 0)) > 0:
            _watchers_send(
                attempt_id,
                {"type": "attempt.closed", "game": game_id},
                failed=f"Watchers of attempt {attempt_id} not told it closed",
            )


# Most ranked attempts are watched by nobody: reading the counts of a gathering's
# submissions at once spares each one a round trip to the cache.
_closed = Gathering(_closed_gathered, blocking=True, logger=logger)


def attempt_assisted_announce(attempt_id: int) -> None:
    """Tell the attempt's watchers that a hint was asked during it (in `on_commit`):
    they read it again, and show it as assisted. Never raises."""
    _watchers_tell(
        attempt_id,
        {"type": "attempt.reset"},
        failed=f"Watchers of attempt {attempt_id} not told it is assisted",
    )


def _watchers_tell(attempt_id: int, message: dict[str, object], *, failed: str) -> None:
    if watchers_count(attempt_id) > 0:
        _watchers_send(attempt_id, message, failed=failed)


def _watchers_send(attempt_id: int, message: dict[str, object], *, failed: str) -> None:
    timeout: float = settings.LIVE_BOARD_SEND_TIMEOUT
    announce_on_layer(
        lambda layer: asyncio.wait_for(
            layer.group_send(watchers_group(attempt_id), message), timeout
        ),
        logger=logger,
        failed=failed,
    )


# --- The feed of stored actions ------------------------------------------------------
#
# One channel layer message per stored write cost the server more than the
# write itself (a publish, a receive, a consumer's dispatch: docs/PERFORMANCE.md).
# So a process gathers the stored actions of all its watched attempts for
# GATHER_SECONDS and sends one message per shard of attempts; every process
# with a watcher of a shard hears it once, and hands each attempt's actions to
# its own watchers of it.

FEED_SHARDS = 16
FEED_MESSAGE = "attempts.actions"
# Messages that may wait for one watching socket whose client reads slowly; past
# that they are dropped, and the socket gets a fresh snapshot once it drains.
FEED_BACKLOG_MAX = 50

# A feed item as a watching socket is handed it: `first`, `actions`, `elapsed_ms`, and
# the game's `progress` after them (`games.streaming.game_progress`, or None).
Fed = tuple[int, list[str], int, dict[str, Any] | None]


def feed_group(shard: int) -> str:
    """The group of the processes with a watcher of an attempt of `shard`."""
    return f"games.attempts.feed.{shard}"


def feed_shard(attempt_id: int) -> int:
    return attempt_id % FEED_SHARDS


class ActionsWatcher(Protocol):
    """A socket watching an attempt."""

    async def actions_passed(
        self,
        first: int,
        actions: list[str],
        elapsed_ms: int,
        progress: dict[str, Any] | None = None,
    ) -> None:
        """Actions `first`, `first + 1`, ... were stored (the last `elapsed_ms` after the
        start; `progress`: the game after them, when the sender knew it): pass on
        what the client lacks."""

    async def attempt_reset(self, event: dict[str, Any]) -> None:
        """Read the attempt again and send a fresh snapshot (actions may have been lost)."""


def actions_stored(
    attempt_id: int,
    first: int,
    actions: list[str],
    elapsed_ms: int,
    *,
    progress: dict[str, Any] | None = None,
) -> None:
    """Actions `first`, `first + 1`, ... of the attempt were stored (on the server's
    loop, by the player's socket): they go to its watchers, with the others of
    the process's next GATHER_SECONDS. `progress` is the game after them
    (`games.streaming.game_progress`): a watcher of its progress only passes it
    on as it comes, whatever it missed before."""
    _actions.add([attempt_id, first, actions, elapsed_ms, progress])


def _actions_gathered(items: list[list[Any]]) -> None:
    """A gathering's stored actions to the feed (on the loop)."""
    AttemptFeed.current().send(items)


_actions = Gathering(_actions_gathered, blocking=False, logger=logger)


class AttemptFeed(SocketsByKey[int, ActionsWatcher]):
    """This process's side of the feed: it sends the gathered stored actions, and
    hands those the feed brings to its watching sockets (`watch(attempt_id,
    socket)`, `unwatch`), in the order they came. One per event loop
    (`AttemptFeed.current()`)."""

    logger = logger
    log_name = "Attempt feed"

    def __init__(self) -> None:
        super().__init__()
        # Per watching socket with a send on its way, the items waiting behind it
        # (`first`, `actions`, `elapsed_ms`); None in place of the list: some were
        # dropped, a snapshot follows.
        self._backlogs: dict[ActionsWatcher, list[Fed] | None] = {}

    def _group(self, key: int) -> str:
        return feed_group(feed_shard(key))

    def send(self, items: list[list[Any]]) -> None:
        """Send stored actions (`[attempt_id, first, actions, elapsed_ms]` each): one
        message per shard, without waiting."""
        shards: dict[int, list[list[Any]]] = defaultdict(list)
        for item in items:
            shards[feed_shard(item[0])].append(item)
        for shard, gathered in shards.items():
            self._spawn(self._send(shard, gathered))

    async def _send(self, shard: int, items: list[list[Any]]) -> None:
        message = {"type": FEED_MESSAGE, "items": items}
        timeout: float = settings.LIVE_BOARD_SEND_TIMEOUT
        try:
            await asyncio.wait_for(self._layer.group_send(feed_group(shard), message), timeout)
        except Exception:  # watchers miss these moves; the games are stored all the same
            logger.warning("Could not pass %d attempts' actions to their watchers", len(items))

    # Receiving: the watching sockets.

    def _handle(self, message: dict[str, Any]) -> None:
        """A feed message: each attempt's actions to its watchers here."""
        if message.get("type") != FEED_MESSAGE or not isinstance(message.get("items"), list):
            return
        # An item without progress comes from a process of the release before it (a
        # rolling restart runs both for a while): its watchers replay the actions.
        for attempt_id, first, actions, elapsed_ms, *progress in message["items"]:
            fed = (first, actions, elapsed_ms, progress[0] if progress else None)
            for socket in self._sockets.get(attempt_id, ()):
                self._pass(socket, fed)

    def _pass(self, socket: ActionsWatcher, fed: Fed) -> None:
        """Hand `fed` to `socket` after what it was handed before, without waiting for
        it: a client that reads slowly holds up its own messages only."""
        if socket not in self._backlogs:
            self._backlogs[socket] = [fed]
            self._spawn(self._drain(socket))
            return
        backlog = self._backlogs[socket]
        if backlog is not None:
            if len(backlog) < FEED_BACKLOG_MAX:
                backlog.append(fed)
            else:
                self._backlogs[socket] = None

    async def _drain(self, socket: ActionsWatcher) -> None:
        try:
            while True:
                backlog = self._backlogs.get(socket)
                if backlog is None:
                    # Messages were dropped: a fresh snapshot says where the game is.
                    self._backlogs[socket] = []
                    await socket.attempt_reset({"type": "attempt.reset"})
                    continue
                if not backlog:
                    return
                await socket.actions_passed(*backlog.pop(0))
        except Exception:  # one socket's failure is its own
            logger.warning("Could not pass actions to a watcher", exc_info=True)
        finally:
            self._backlogs.pop(socket, None)

    def _caught_up(self) -> None:
        """Actions may have been lost: every watcher reads its attempt afresh."""
        for sockets in list(self._sockets.values()):
            for socket in list(sockets):
                self._spawn(socket.attempt_reset({"type": "attempt.reset"}))
