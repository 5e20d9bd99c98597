"""Who watches a ranked attempt live, and the channel layer groups that carry it.

The attempt's socket (`games.consumers`) passes each stored action to the
watchers' group, and hears the watchers' count in the player's group; a
submission tells the watchers that the attempt is over (`attempt_closed_announce`,
after commit). The count is kept in the shared cache, so that every server
process reads the same one.
"""

from __future__ import annotations

import asyncio
import logging

from django.conf import settings
from django.core.cache import cache

from easyharp_site.cache import shared_count_change, shared_place_take
from easyharp_site.layer import Gathering, announce_on_layer

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
