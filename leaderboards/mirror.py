"""The day's board entries mirrored in Redis, for the boards that read many players at once.

A friends board ranks the viewer and up to 1,000 players they follow. From the
table that is one index lookup per player; from the mirror, one request.

- **Layout.** One Redis hash per day (`eh:day-entries:YYYY-MM-DD`): a field
  per player with a record that day (its version, ":", the record: the
  player's ranked game, on the score board and, when won, on the moves
  board; or none left), the field `complete` once the hash holds every
  entry of its day, and `building` while a build runs. The hash expires
  `KEEP_DAYS` after its day (and never sooner than an hour after a write).
- **Writers** are the board services, which change a player's entries with
  the player's row locked (`leaderboards.services`). Inside that transaction
  they mark the player's record pending (`mirror_pending`: readers read that
  player from the table), and after it commits they write the new record
  (`mirror_store`). Both carry the version read under the lock (Redis's own
  clock, in microseconds: one clock for every server process), and no write
  replaces a later version: two writes arriving out of order leave the later
  one, and a lost write after the commit leaves the player pending, read
  from the table.
- **The build** (`leaderboards.services.board_mirror_build`, the worker's
  `build the board mirror` job) adds every entry of the day from the table with
  version 0, only where a field is empty (a writer's record wins), then marks
  the hash complete, unless the hash was dropped meanwhile.
- **Readers** (`mirror_read`) use a complete hash only: a player without a
  field there has no entry. Otherwise, or with Redis failing, the boards
  read the table. Reads never write.
- **A writer that cannot reach Redis** before its commit cannot mark the
  record pending: its process drops the day's hash at its next successful
  call, and the next build makes it again.

The mirror is on when `BOARD_MIRROR` is (by default when `REDIS_URL` is set). It
lives in the Redis of what may be evicted (`CACHE_REDIS_URL`): a day's hash
evicted is one key gone, and its board reads the table until the next build.
"""

from __future__ import annotations

import datetime
import functools
import logging
import secrets
import struct
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeVar, cast

import redis
from django.conf import settings
from django.db import transaction
from redis.backoff import NoBackoff
from redis.retry import Retry

from easyharp_site.dates import utc_aware
from easyharp_site.layer import Gathering

logger = logging.getLogger(__name__)

# How long a day's hash lives after its day ends (the boards of today and
# yesterday are the ones read most), and at least after its last write.
KEEP_DAYS = 2
KEEP_SECONDS = 3600
# Longest wait on Redis; past it the boards read the table. After a failure,
# this process leaves Redis alone for PAUSE_SECONDS (a submission never waits
# on a Redis that is away, its player's row locked, more than once in that time).
TIMEOUT_SECONDS = 0.5
PAUSE_SECONDS = 5.0

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
# kind, game id, score, moves, duration_ms, submitted_at (µs since the epoch).
_RECORD = struct.Struct("<Bqiiqq")
# A field's value: its version (16 digits, zero-padded), ":", its record.
_VERSION_WIDTH = 16
_VALUE = struct.Struct(f"<{_VERSION_WIDTH + 1}x" + _RECORD.format.removeprefix("<"))
ON_SCORE, ON_MOVES, WON = 1, 2, 4
# A record's fields by position. The reads hand records on as plain tuples in
# `DayRecord`'s order, which cost a third of named ones to make and to read
# (1,001 of them a friends board).
KIND, GAME, SCORE, MOVES, DURATION, SUBMITTED = range(6)
Fields = tuple[int, int, int, int, int, int]
# The kind of a record whose writer has not committed yet: read from the table
# (no board's bit set).
PENDING = 128
_COMPLETE, _BUILDING = "complete", "building"

# Write ARGV[1] (a value) into field ARGV[2], unless the field holds a later
# version; the hash expires at ARGV[3] (Unix time).
_STORE = """
local old = redis.call('HGET', KEYS[1], ARGV[2])
if old and tonumber(string.sub(old, 1, 16)) > tonumber(string.sub(ARGV[1], 1, 16)) then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[1])
redis.call('EXPIREAT', KEYS[1], ARGV[3])
return 1
"""

# Write the values of the (field, value) pairs after ARGV[1] where the field is
# empty; the hash expires at ARGV[1] (Unix time).
_ADD = """
for i = 2, #ARGV, 2 do redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('EXPIREAT', KEYS[1], ARGV[1])
return 1
"""

# Mark field ARGV[1] pending with the version of Redis's own clock (one clock
# for every server process, whatever their hosts' clocks say), ARGV[2] being
# the pending record; the hash expires at ARGV[3]. Returns the version.
_PENDING = """
local now = redis.call('TIME')
local version = string.format('%016d', now[1] * 1000000 + now[2])
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old and tonumber(string.sub(old, 1, 16)) > tonumber(version) then
  version = string.sub(old, 1, 16)
end
redis.call('HSET', KEYS[1], ARGV[1], version .. ':' .. ARGV[2])
redis.call('EXPIREAT', KEYS[1], ARGV[3])
return version
"""

# Start a build with token ARGV[1] unless the hash is complete (then nil); the
# hash expires at ARGV[2].
_BUILD_START = """
if redis.call('HEXISTS', KEYS[1], 'complete') == 1 then return nil end
redis.call('HSET', KEYS[1], 'building', ARGV[1])
redis.call('EXPIREAT', KEYS[1], ARGV[2])
return ARGV[1]
"""

# Mark the hash complete if the build of token ARGV[1] is still the one running.
_BUILD_FINISH = """
if redis.call('HGET', KEYS[1], 'building') ~= ARGV[1] then return 0 end
-- In this order: a hash left empty by the HDEL would be deleted, with its expiry.
redis.call('HSET', KEYS[1], 'complete', '1')
redis.call('HDEL', KEYS[1], 'building')
return 1
"""


def _value(version: int, record: DayRecord) -> bytes:
    return b"%0*d:" % (_VERSION_WIDTH, version) + record.pack()


class DayRecord(NamedTuple):
    """A player's entries of a day: none, or their ranked game on one or both boards
    (`kind`: ON_SCORE, ON_MOVES and WON as bits; 0 for none)."""

    kind: int
    game_id: int = 0
    score: int = 0
    moves: int = 0
    duration_ms: int = 0
    submitted_us: int = 0  # microseconds since the epoch

    def pack(self) -> bytes:
        return _RECORD.pack(*self)


def micros(moment: datetime.datetime) -> int:
    """Microseconds since the epoch."""
    return (utc_aware(moment) - _EPOCH) // datetime.timedelta(microseconds=1)


def moment(micros: int) -> datetime.datetime:
    """The moment `micros` microseconds after the epoch."""
    return _EPOCH + datetime.timedelta(microseconds=micros)


NO_ENTRY = DayRecord(0)


def game_record(
    *,
    game_id: int,
    score: int,
    moves: int,
    won: bool,
    duration_ms: int,
    submitted_at: datetime.datetime,
) -> DayRecord:
    """The record of a player whose ranked game of the day this is: on the score
    board, and on the moves board too when it was won (`game_counts_on`)."""
    kind = ON_SCORE | (ON_MOVES | WON if won else 0)
    return DayRecord(kind, game_id, score, moves, duration_ms, micros(submitted_at))


def mirror_enabled() -> bool:
    return bool(settings.BOARD_MIRROR)


@functools.cache
def _client(url: str) -> redis.Redis:
    # No retries: a board reads the table rather than wait.
    return redis.Redis.from_url(
        url,
        socket_timeout=TIMEOUT_SECONDS,
        socket_connect_timeout=TIMEOUT_SECONDS,
        retry=Retry(NoBackoff(), 0),
    )


def _key(date: datetime.date) -> str:
    return f"eh:day-entries:{date.isoformat()}"


def _expires(date: datetime.date) -> int:
    """When the day's hash expires (Unix time): KEEP_DAYS after the day ends, and
    never sooner than KEEP_SECONDS from now (an older day's board, read again)."""
    end = datetime.datetime.combine(date, datetime.time(), datetime.UTC)
    after_day = int((end + datetime.timedelta(days=1 + KEEP_DAYS)).timestamp())
    return max(after_day, int(time.time()) + KEEP_SECONDS)


# Days whose hash this process failed to bring in step: dropped at its next
# successful call (the next build makes it again).
_untrusted: set[datetime.date] = set()
# Until when (time.monotonic()) this process leaves Redis alone after a failure.
_paused_until = 0.0

T = TypeVar("T")


def _call(action: Callable[[redis.Redis], T], *, lost: datetime.date | None = None) -> T | None:
    """`action` on the mirror's Redis, after dropping the hashes this process could
    not keep in step; None (logged) when Redis fails, and then the day `lost`, if
    given, is dropped once Redis answers again."""
    global _paused_until
    if time.monotonic() < _paused_until:
        if lost is not None:
            _untrusted.add(lost)
        return None
    client = _client(settings.CACHE_REDIS_URL)
    try:
        if _untrusted:
            dropped = set(_untrusted)
            client.delete(*(_key(day) for day in dropped))
            _untrusted.difference_update(dropped)
        return action(client)
    except redis.RedisError as error:
        logger.warning("board mirror unavailable (%s): boards read the table", error)
        _paused_until = time.monotonic() + PAUSE_SECONDS
        if lost is not None:
            _untrusted.add(lost)
        return None


def mirror_read(
    *, date: datetime.date, player_ids: Sequence[int], built: bool = False
) -> dict[int, Fields] | None:
    """The records of these players on `date` (a player without one has no entry),
    as plain tuples in `DayRecord`'s order, those of kind PENDING to be read from
    the table; None when the mirror is off, unavailable or not complete for the
    day (with `built`, the records there are even so: the check reads a mirror
    being built). One request (HMGET)."""
    if not mirror_enabled():
        return None
    values = _call(lambda client: client.hmget(_key(date), [_COMPLETE, *player_ids]))
    if values is None or (values[0] is None and not built):
        return None
    held = [
        (player_id, cast(bytes, value))
        for player_id, value in zip(player_ids, values[1:], strict=True)
        if value is not None
    ]
    blob = b"".join(value for _, value in held)
    return {
        player_id: fields
        for (player_id, _), fields in zip(held, _VALUE.iter_unpack(blob), strict=True)
    }


def mirror_pending(*, date: datetime.date, player_id: int) -> int | None:
    """Inside the transaction that changes a player's entries of `date` (their row
    locked): mark their record pending, so that readers read them from the table
    until `mirror_store` writes the new one after the commit. Returns the
    version both carry, read from Redis's clock under the player's lock, so
    that it grows from one writer of the player to the next whichever server
    process each runs in (None when the mirror is off or Redis failed: then
    the day is dropped when Redis answers again)."""
    if not mirror_enabled():
        return None
    pending = DayRecord(PENDING).pack()
    version = _call(
        lambda client: _eval(client, _PENDING, date, player_id, pending, _expires(date)),
        lost=date,
    )
    return int(version) if version is not None else None


def mirror_store(*, date: datetime.date, player_id: int, record: DayRecord, version: int) -> None:
    """After the commit that changed a player's entries of `date`, write their new
    record with the version `mirror_pending` gave (scheduled here with
    `transaction.on_commit`; under the server, with the records of the process's
    other requests of the next `GATHER_SECONDS`, in one round trip)."""
    item = (date, player_id, _value(version, record), _expires(date))
    transaction.on_commit(functools.partial(_stores.add, item))


def _stores_gathered(items: list[tuple[datetime.date, int, bytes, int]]) -> None:
    """The writes `mirror_store` schedules after the commits: one request, a Lua
    script per record in one pipeline (each script runs whole, as on its own)."""

    def store(client: redis.Redis) -> None:
        pipeline = client.pipeline(transaction=False)
        for date, player_id, value, expires in items:
            _eval(pipeline, _STORE, date, value, player_id, expires)
        pipeline.execute()

    _call(store)


_stores = Gathering(_stores_gathered, blocking=True, logger=logger)


def mirror_build_start(*, date: datetime.date) -> str | None:
    """Start building the day's hash: a token for `mirror_build_finish`, or None
    when it is complete already, or the mirror is off or unavailable."""
    if not mirror_enabled():
        return None
    token = secrets.token_hex(8)
    started = _call(lambda client: _eval(client, _BUILD_START, date, token, _expires(date)))
    return token if started is not None else None


def mirror_add(*, date: datetime.date, records: dict[int, DayRecord]) -> bool:
    """Add records read from the table with version 0, where a player has no field
    yet (a writer's record is never replaced). False when Redis failed."""
    args: list[Any] = [_expires(date)]
    for player_id, record in records.items():
        args += [player_id, _value(0, record)]
    return _call(lambda client: _eval(client, _ADD, date, *args)) is not None


def mirror_build_finish(*, date: datetime.date, token: str) -> bool:
    """Mark the day's hash complete if the build `token` still runs on it (a hash
    dropped or rebuilt meanwhile is not)."""
    return bool(_call(lambda client: _eval(client, _BUILD_FINISH, date, token)))


def mirror_complete(*, date: datetime.date) -> bool:
    """Whether the day's hash is complete (readers use it)."""
    return bool(mirror_enabled() and _call(lambda client: client.hexists(_key(date), _COMPLETE)))


def _eval(
    client: redis.Redis | redis.client.Pipeline, script: str, date: datetime.date, *args: Any
) -> Any:
    return client.eval(script, 1, _key(date), *args)
