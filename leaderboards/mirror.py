"""The day's board entries mirrored in Redis, for boards that read many players at once.

A friends board ranks the viewer and up to 1,000 players they follow. Read
from the table, that is one index lookup per player; the mirror answers all
of them in one request. It holds, per day, one record per player: the
player's entries of that day (one ranked game a day puts a player on the
score board, and on the moves board if it was won), or "no entry".

- **Layout.** One Redis hash per day (`eh:day-entries:YYYY-MM-DD`), a field
  per player id, the value its version, ":" and its record. The hash expires
  `KEEP_DAYS` after its day, or an hour after its last write if that is later.
- **Writers** are the board services, which change a player's entries with
  the player's row locked (`leaderboards.services`). Inside that
  transaction they remove the player's record (`mirror_forget`), and after
  it commits they write the new one (`mirror_store`), versioned by the clock
  read under the lock: of two writes of the same record, the later version
  wins whatever order they arrive in.
- **Readers** (`mirror_read`) take what the mirror holds and read the rest
  from the table (`mirror_fill`), which they add with version 0: only where
  the field is still empty, so a reader that read the table before a
  writer's commit never overwrites that writer's record.
- **Without Redis, or when it fails,** the boards read the table, as they do
  with no mirror at all. A process that failed to write a record drops that
  day's whole hash at its next successful call, so the mirror never keeps a
  record that a lost write should have replaced; it fills again from reads.

The mirror is on when `BOARD_MIRROR` is (by default when `REDIS_URL` is set).
"""

from __future__ import annotations

import datetime
import functools
import logging
import struct
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple, TypeVar, cast

import redis
from django.conf import settings
from django.db import transaction

from easyharp_site.dates import utc_aware

logger = logging.getLogger(__name__)

# How long a day's hash lives after its day ends (the boards of today and
# yesterday are the ones read most), and at least after its last write.
KEEP_DAYS = 2
KEEP_SECONDS = 3600
# Longest wait on Redis; past it the boards read the table.
TIMEOUT_SECONDS = 0.5

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
# What a read puts in place of a field the hash does not hold.
_NOT_HELD_KIND = 255
_NOT_HELD = bytes(_VERSION_WIDTH + 1) + _RECORD.pack(_NOT_HELD_KIND, 0, 0, 0, 0, 0)
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
_FILL = """
for i = 2, #ARGV, 2 do redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('EXPIREAT', KEYS[1], ARGV[1])
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


# A board entry's row: board, game id, score, moves, won, duration_ms, submitted_at.
EntryRow = tuple[str, int, int, int, bool, int, datetime.datetime]


def day_record(rows: Iterable[EntryRow]) -> DayRecord:
    """A player's record of a day from the rows of their board entries of that day."""
    kind, game = 0, None
    for row in rows:
        kind |= ON_SCORE if row[0] == "score" else ON_MOVES
        if game is not None and game[1:] != row[1:]:
            raise ValueError(f"a player's entries of a day are of one game: {game} {row}")
        game = row
    if game is None:
        return NO_ENTRY
    _, game_id, score, moves, won, duration_ms, submitted_at = game
    kind |= WON if won else 0
    return DayRecord(kind, game_id, score, moves, duration_ms, micros(submitted_at))


def mirror_enabled() -> bool:
    return bool(settings.BOARD_MIRROR)


@functools.cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(
        url, socket_timeout=TIMEOUT_SECONDS, socket_connect_timeout=TIMEOUT_SECONDS
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
# successful call (the hash refills from reads).
_untrusted: set[datetime.date] = set()

T = TypeVar("T")


def _call(action: Callable[[redis.Redis], T], *, lost: datetime.date | None = None) -> T | None:
    """`action` on the mirror's Redis, after dropping the hashes this process could
    not keep in step; None (logged) when Redis fails, and then the day `lost`, if
    given, is dropped once Redis answers again."""
    client = _client(settings.REDIS_URL)
    try:
        if _untrusted:
            dropped = set(_untrusted)
            client.delete(*(_key(day) for day in dropped))
            _untrusted.difference_update(dropped)
        return action(client)
    except redis.RedisError as error:
        logger.warning("board mirror unavailable (%s): boards read the table", error)
        if lost is not None:
            _untrusted.add(lost)
        return None


def mirror_read(*, date: datetime.date, player_ids: Sequence[int]) -> dict[int, Fields] | None:
    """The records the mirror holds of these players on `date` (absent: not held),
    as plain tuples in `DayRecord`'s order; None when the mirror is off or
    unavailable. One request (HMGET)."""
    if not mirror_enabled():
        return None
    if not player_ids:
        return {}
    values = _call(lambda client: client.hmget(_key(date), player_ids))
    if values is None:
        return None
    blob = b"".join(cast(bytes, value) if value is not None else _NOT_HELD for value in values)
    return {
        player_id: fields
        for player_id, fields in zip(player_ids, _VALUE.iter_unpack(blob), strict=True)
        if fields[KIND] != _NOT_HELD_KIND
    }


def mirror_fill(*, date: datetime.date, records: dict[int, DayRecord]) -> None:
    """Add records read from the table, where the mirror holds none yet."""
    if not mirror_enabled() or not records:
        return
    args: list[Any] = [_expires(date)]
    for player_id, record in records.items():
        args += [player_id, _value(0, record)]
    _call(lambda client: client.eval(_FILL, 1, _key(date), *args))


def mirror_forget(*, date: datetime.date, player_id: int) -> None:
    """Remove a player's record, inside the transaction that changes their entries
    (so that a read in that transaction, or a read after a lost write, goes to the
    table); `mirror_store` writes the new one after the commit."""
    if mirror_enabled():
        _call(lambda client: client.hdel(_key(date), player_id), lost=date)


def mirror_store(*, date: datetime.date, player_id: int, record: DayRecord) -> None:
    """After the commit that changed a player's entries of `date`, write their new
    record. Called with the player's row still locked (it reads the version), it
    schedules the write itself with `transaction.on_commit`."""
    if not mirror_enabled():
        return
    value = _value(time.time_ns() // 1000, record)
    expires = _expires(date)
    transaction.on_commit(
        lambda: _call(
            lambda client: client.eval(_STORE, 1, _key(date), value, player_id, expires),
            lost=date,
        )
    )
