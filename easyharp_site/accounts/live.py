"""Sockets of signed-in players end with their sessions.

A socket signs in once, by its session cookie, when it connects; a session can
end while it is open (a sign-out, here or everywhere, a new password, a ban, a
deletion). So:

- `session_player_id` checks a session as Django checks a request's: the
  session still exists, its password digest is the player's current one, the
  player is active, and it was signed in under the player's current session
  generation (`sessions`). A socket checks its session with it on connect,
  after it registered for the announcements below, so that none falls between.
- The writes that end sessions, and every sign-out (`receivers`), call
  `player_sessions_ended` after commit: one message to the player's group on
  the default channel layer.
- In each server process, `PlayerSockets` (one per event loop) is the only
  member of the group of each player with a socket open there, and hands each
  announcement to that player's sockets, which check their sessions again and
  close when they ended. When the channel layer comes back after an outage,
  every socket checks its session again (announcements may have been lost).
"""

from __future__ import annotations

import asyncio
import logging
from importlib import import_module
from typing import Any, Protocol

from channels.layers import BaseChannelLayer
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, load_backend
from django.contrib.sessions.backends.base import SessionBase
from django.utils.crypto import constant_time_compare

from easyharp_site.accounts.selectors import SESSION_GENERATION_KEY, sessions_generation
from easyharp_site.layer import SocketsByKey, announce_on_layer

logger = logging.getLogger(__name__)

MESSAGE_TYPE = "sessions.ended"


def player_group(player_id: int) -> str:
    """The channel layer group that hears of the end of the player's sessions."""
    return f"accounts.sessions.{player_id}"


# --- Checking a session -----------------------------------------------------------


def session_player_id(*, session_key: str | None) -> int | None:
    """The player the session still signs in, or None when it has ended.

    Django's `auth.get_user` without its side effects: it flushes a session
    whose digest is stale and renews one signed with a fallback secret, which
    a socket cannot hand back to its browser.
    """
    if not session_key:
        return None
    session: SessionBase = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    try:
        player_pk = session[SESSION_KEY]
        backend_path = session[BACKEND_SESSION_KEY]
    except KeyError:
        return None
    if backend_path not in settings.AUTHENTICATION_BACKENDS:
        return None
    # The backend refuses an inactive player (banned, deleted).
    player = load_backend(backend_path).get_user(player_pk)
    if player is None:
        return None
    digest = session.get(HASH_SESSION_KEY) or ""
    digests = [player.get_session_auth_hash(), *player.get_session_auth_fallback_hash()]
    if not any(constant_time_compare(digest, known) for known in digests):
        return None
    stamped = session.get(SESSION_GENERATION_KEY, 0)
    if stamped < sessions_generation(player_id=player.pk):
        return None
    return int(player.pk)


# --- Announcing (service side) ------------------------------------------------------


def player_sessions_ended(*, player_id: int) -> None:
    """Tell every server process that sessions of the player ended: their sockets check again.

    Called in `transaction.on_commit` by the writes that end sessions. Never
    raises: with the channel layer down the failure is logged, and the sockets
    check their sessions again when their process finds the layer back.
    """
    failed = (
        f"Sockets of player {player_id} not told that sessions ended (channel layer unavailable)"
    )
    announce_on_layer(lambda layer: _announce(layer, player_id), logger=logger, failed=failed)


async def _announce(layer: BaseChannelLayer, player_id: int) -> None:
    message = {"type": MESSAGE_TYPE, "player": player_id}
    timeout: float = settings.LIVE_BOARD_SEND_TIMEOUT
    await asyncio.wait_for(layer.group_send(player_group(player_id), message), timeout)


# --- Hearing (socket side) ----------------------------------------------------------


class SessionSocket(Protocol):
    """A socket signed in as a player."""

    async def session_ended(self) -> None:
        """Check the socket's session again; close the socket if it has ended."""


class PlayerSockets(SocketsByKey[int, SessionSocket]):
    """This process's subscriber to the end of sessions of the players with a socket here.

    One per event loop (`PlayerSockets.current()`). A signed-in socket calls
    `watch(player_id, socket)` on connect and `unwatch` when it ends, however it
    ends.
    """

    logger = logger
    log_name = "Sessions"

    def _group(self, key: int) -> str:
        return player_group(key)

    def _tell(self, player_ids: list[int]) -> None:
        for player_id in player_ids:
            for socket in list(self._sockets.get(player_id, ())):
                self._spawn(socket.session_ended())

    def _caught_up(self) -> None:
        """Announcements may have been lost: every socket checks its session."""
        self._tell(list(self._sockets))

    def _handle(self, message: dict[str, Any]) -> None:
        """A `sessions.ended` message: the player's sockets here check their sessions."""
        if message.get("type") == MESSAGE_TYPE and isinstance(message.get("player"), int):
            self._tell([message["player"]])
