"""Replays: a game's tables, built by the engine once (outside the server process)
and kept.

`game_replay` builds one here, in this process (tests, benches);
`game_replay_gzipped` is what the API serves: built in the heavy work pool and
kept in the cache.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import logging
import threading
from functools import partial
from typing import Any

from django.conf import settings
from django.core.cache import caches
from rest_framework import status

from easyharp_site.errors import ServiceError
from games import rules
from games.models import DailyDeal, Game
from games.pool import Requester, heavy_submit, heavy_wait
from games.work import replay_build, replay_data

logger = logging.getLogger(__name__)


def _replay_supported(game: Game) -> None:
    if game.rules_version != rules.RULES_VERSION:
        # A future engine keeps old rule sets; until then, say why rather than
        # replay a game under rules it was not played by.
        raise ServiceError(
            "rules_version_unsupported",
            f"Game {game.pk} was played under rules {game.rules_version}, "
            f"which this server cannot replay.",
            status_code=status.HTTP_409_CONFLICT,
        )


def game_replay(*, game: Game) -> dict[str, Any]:
    """`{game, deal, rules_version, start, steps}`: the deal's table once, then what
    each action changed (`games.work.replay_data`, built here, in this process)."""
    _replay_supported(game)
    return replay_data(game_id=game.pk, deal_number=game.deal_number, log=game.log)


def game_replay_gzipped(*, game: Game, requester: Requester) -> bytes:
    """`game_replay` as the API serves it, gzipped JSON: built once, in the heavy work
    pool (`games.pool`) in `requester`'s turn, and kept in the `evictable` cache
    for REPLAY_CACHE_SECONDS (made again if it was evicted).

    A stored game's log never changes, so the body is kept per game, rules
    version and log (its digest: a key that cannot name another game's body).
    Requests for a body being built wait for that build (in this process)
    rather than start another; while it is built, the request holds no
    database connection.
    """
    _replay_supported(game)
    return _replay_gzipped(
        f"replay:{game.rules_version}:{game.pk}",
        requester=requester,
        game_id=game.pk,
        deal=game.deal_number,
        log=game.log,
    )


def par_replay_gzipped(*, daily: DailyDeal, requester: Requester) -> bytes:
    """The replay of `daily`'s par line (the solver's win, `game` null), as
    `game_replay_gzipped` serves a game's: built in the pool and kept."""
    return _replay_gzipped(
        f"replay:{rules.RULES_VERSION}:par:{daily.date.isoformat()}",
        requester=requester,
        game_id=None,
        deal=daily.number,
        log=daily.par_log,
    )


def _replay_gzipped(
    prefix: str, *, requester: Requester, game_id: int | None, deal: int, log: str
) -> bytes:
    digest = hashlib.blake2b(log.encode(), digest_size=12).hexdigest()
    key = f"{prefix}:{digest}"
    body = _cache_get(key)
    if body is not None:
        return body
    with _building_lock:
        future = _building.get(key)
        if future is None:
            future = heavy_submit(
                replay_build, requester=requester, game_id=game_id, deal_number=deal, log=log
            )
            _building[key] = future
            future.add_done_callback(partial(_replay_built, key))
    try:
        return heavy_wait(future)
    finally:
        # A build that failed or ran out of time is not waited for again.
        if not future.done() or future.cancelled():
            with _building_lock:
                if _building.get(key) is future:
                    del _building[key]


def _replay_built(key: str, future: concurrent.futures.Future[bytes]) -> None:
    # Kept before it is forgotten, so that no request finds neither.
    if not future.cancelled() and future.exception() is None:
        _cache_set(key, future.result())
    with _building_lock:
        _building.pop(key, None)


# The replays being built in this process, by cache key.
# Reentrant: a build already finished runs its done-callback at once, in the
# thread that adds it, which holds this lock then.
_building_lock = threading.RLock()
_building: dict[str, concurrent.futures.Future[bytes]] = {}


def _cache_get(key: str) -> bytes | None:
    try:
        body = caches["evictable"].get(key)
    except Exception:  # the cache away (Redis down) only costs a build
        logger.warning("replay cache unavailable", exc_info=True)
        return None
    return body if isinstance(body, bytes) else None


def _cache_set(key: str, body: bytes) -> None:
    try:
        caches["evictable"].set(key, body, settings.REPLAY_CACHE_SECONDS)
    except Exception:
        logger.warning("replay cache unavailable", exc_info=True)
