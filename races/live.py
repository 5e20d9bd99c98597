"""A race's channel-layer group: every change of a race reaches the sockets of its
players, and of those who watch it from its page without being in it.

The services call `race_changed` after their commit (a join, a leave, the
start, a stored action, the end): it reads the race's state once and sends
it to the group, whose sockets (`races.consumers`) pass it on, a watcher's
as the watched state (no deal before the end). One send per change whoever
watches: a stored action costs what it cost before anyone could watch. A
socket also reads the state itself on each heartbeat, so a player who
stopped answering shows as away without anyone's action.
"""

from __future__ import annotations

import asyncio
import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.utils import timezone

from races import selectors

logger = logging.getLogger(__name__)


def race_group(race_id: int) -> str:
    """The group of the sockets of a race's players and watchers."""
    return f"races.race.{race_id}"


def race_changed(race_id: int) -> None:
    """Send the race's state to its sockets (in `on_commit`). Never raises: with the
    channel layer down they miss it, and their next heartbeat reads it."""
    try:
        layer = get_channel_layer()
        if layer is None:
            return
        race = selectors.race_by_id(race_id=race_id)
        message = {
            "type": "race.state",
            "state": selectors.race_state(race=race, now=timezone.now()),
        }
        timeout: float = settings.LIVE_BOARD_SEND_TIMEOUT
        async_to_sync(asyncio.wait_for)(layer.group_send(race_group(race_id), message), timeout)
    except Exception:
        logger.warning("The players of race %s were not told of a change", race_id, exc_info=True)
