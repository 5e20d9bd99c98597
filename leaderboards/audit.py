"""A check that mends: a day's derived stores recomputed from its games, compared, repaired.

Everything the boards keep of a day is a cache of its games: the board entries,
the board counters (`BoardTotal`, `BoardBucket`, with the changes not folded
into them yet), the board mirror in Redis,
the players' records (`PlayerStats`) and, once the day is closed, the final
ranks and the day's results. `board_check` recomputes each from the games and
reports every difference by kind and player (`Drift`); with `repair` it puts
them right. The apps above add checks of their own stores (the leagues' day
points and standings), run after it (`board_check`'s `then`, from `ranking.audit`).

Bounded memory whatever the day's size: the players are read in chunks of
`CHUNK` by player id (their games, entries, mirror records and records, each
chunk in one snapshot), and the whole-board comparisons (counters, final
ranks, results) are set-based SQL that hands back only the differences,
streamed. Submissions go on meanwhile: a player is mended under their row
lock, as the board services write them, from their games read under it; the
counters are mended by adding the difference measured in one snapshot, which
commutes with the submissions' own additions.
"""

from __future__ import annotations

import contextlib
import datetime
import itertools
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from games.models import DailyDeal, Game, ReviewState
from leaderboards import live, mirror
from leaderboards.models import (
    DURATION_UNKNOWN,
    WON_AHEAD,
    Board,
    BoardCheck,
    DayResult,
    PlayerStats,
    board_sort_key,
)
from leaderboards.records import RECORD_FIELDS, Record, record_fold
from leaderboards.selectors import (
    board_buckets,
    board_totals,
    day_records,
    score_distribution,
    stats_record,
)
from leaderboards.services import (
    BOARDS,
    CLOSE_BATCH,
    board_counter_add,
    board_entries_rewrite,
    board_total_mend,
    day_close,
    days_to_close,
    final_ranks_store,
    player_stats_recompute,
)

# How long a job that runs every few minutes may take to do its part (close a
# day, settle it) before the check calls it left undone.
JOB_GRACE = datetime.timedelta(minutes=30)

# Players read per chunk: their games, entries, mirror records and records.
CHUNK = 5_000
# Differences kept as text in the stored result (`BoardCheck.examples`).
EXAMPLES_KEPT = 50


@dataclass(frozen=True)
class Drift:
    """One difference between a derived store and what the games give."""

    kind: str  # entry, counter, mirror, record, final_rank, day_result, and the apps' own
    player_id: int | None
    detail: str

    def __str__(self) -> str:
        who = f"player {self.player_id}: " if self.player_id is not None else ""
        return f"{self.kind}: {who}{self.detail}"


Found = Callable[[Drift], None]


class DayCheck(Protocol):
    """A check of an app's own stores of a day, run after the boards' (`board_check`'s
    `then`), so that a repair reads mended boards."""

    def __call__(self, *, date: datetime.date, repair: bool, found: Found) -> None: ...


@dataclass
class CheckResult:
    """What one check of one day found, by kind, and whether it mended it."""

    date: datetime.date
    repaired: bool
    drift: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)
    seconds: float = 0.0
    mirror_checked: bool = False

    @property
    def clean(self) -> bool:
        return not self.drift


# --- The games, as the boards count them ------------------------------------------------

# A game that may be on a board (`services.game_is_ranked`), as SQL over `g`
# (games_game) and `u` (its player), with ReviewState.HELD as its parameter.
COUNTED_SQL = (
    "g.ranked AND NOT g.assisted AND g.voided_at IS NULL AND g.review_state <> %s AND u.is_active"
)
_GAMES_OF_CHUNK = f"""
SELECT g.player_id, g.id, g.score, g.moves, g.won, g.duration_ms, g.created_at, {COUNTED_SQL}
FROM games_game g JOIN auth_user u ON u.id = g.player_id
WHERE g.daily_id = %s AND g.player_id > %s AND g.player_id <= %s
"""
_ENTRIES_OF_CHUNK = """
SELECT player_id, board, game_id, key1, key2, duration_ms, submitted_at, score, moves, won
FROM leaderboards_boardentry WHERE date = %s AND player_id > %s AND player_id <= %s
"""
_CHUNK_END = """
SELECT player_id FROM games_game WHERE daily_id = %s AND player_id > %s
ORDER BY player_id LIMIT 1 OFFSET %s
"""
# The highest player id there is: the end of the last chunk.
_NO_END = 2**63 - 1

# A counted game's key1 on the score board (`board_sort_key`), as SQL over `g`.
SCORE_KEY_SQL = f"(-g.score - CASE WHEN g.won THEN {WON_AHEAD} ELSE 0 END)"
# Each board's key1 per counted game (`board_sort_key`), and whether it counts there.
_BOARD_KEYS: dict[str, tuple[str, str, str]] = {
    Board.SCORE: (SCORE_KEY_SQL, "g.moves", "true"),
    Board.MOVES: ("g.moves", "-g.score", "g.won"),
}


def _expected_entry(board: str, game: tuple[Any, ...]) -> tuple[Any, ...]:
    """The entry a counted game gives on `board`, as `_ENTRIES_OF_CHUNK` reads one."""
    game_id, score, moves, won, duration_ms, created_at = game
    key1, key2 = board_sort_key(board=board, score=score, moves=moves, won=won)
    duration = duration_ms if duration_ms is not None else DURATION_UNKNOWN
    return (game_id, key1, key2, duration, created_at, score, moves, won)


def _game_record(game: tuple[Any, ...] | None) -> mirror.DayRecord:
    if game is None:
        return mirror.NO_ENTRY
    game_id, score, moves, won, duration_ms, created_at = game
    return mirror.game_record(
        game_id=game_id,
        score=score,
        moves=moves,
        won=won,
        duration_ms=duration_ms if duration_ms is not None else DURATION_UNKNOWN,
        submitted_at=created_at,
    )


def _entry_text(values: tuple[Any, ...] | None) -> str:
    if values is None:
        return "none"
    game_id, _, _, duration, submitted_at, score, moves, won = values
    return (
        f"game {game_id} (score {score}, moves {moves}, {'won' if won else 'not won'}, "
        f"{duration} ms, {submitted_at.isoformat()})"
    )


# --- Reading in snapshots ---------------------------------------------------------------


@contextlib.contextmanager
def _snapshot() -> Iterator[None]:
    """A transaction whose reads all see one moment (REPEATABLE READ on PostgreSQL),
    so that a submission committing meanwhile is seen in every table or in none."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


def _rows(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


def rows_streamed(sql: str, params: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
    """The rows of `sql`, a thousand at a time (a server-side cursor on PostgreSQL), in
    one snapshot; for comparisons whose differences could be many."""
    with _snapshot():
        cursor = connection.chunked_cursor()
        try:
            cursor.execute(sql, params)
            while rows := cursor.fetchmany(1_000):
                yield from rows
        finally:
            cursor.close()


def _chunks(daily_id: int | None) -> Iterator[tuple[int, int]]:
    """(after, until] ranges of player ids of about CHUNK players with games that day
    each; the last one reaches every higher id (an entry without a game)."""
    after = 0
    while daily_id is not None:
        end = _rows(_CHUNK_END, [daily_id, after, CHUNK - 1])
        if not end:
            break
        yield after, end[0][0]
        after = end[0][0]
    yield after, _NO_END


# --- Per player: entries, mirror, records -------------------------------------------------


@dataclass
class _Chunk:
    counted: dict[int, tuple[Any, ...]]  # player: (game id, score, moves, won, duration, at)
    played: set[int]  # players with any game of the day (a voided one changes a record)
    entries: dict[tuple[int, str], tuple[Any, ...]]
    claimed: set[int]  # players whose record says they played that day
    records: dict[int, Record]
    stored_records: dict[int, Record]
    mirrored: dict[int, mirror.Fields] | None
    mirror_complete: bool


def _chunk_read(
    date: datetime.date, daily_id: int | None, after: int, until: int, mirror_complete: bool
) -> _Chunk:
    with _snapshot():
        counted: dict[int, tuple[Any, ...]] = {}
        played: set[int] = set()
        if daily_id is not None:
            for player_id, *game, counts in _rows(
                _GAMES_OF_CHUNK, [ReviewState.HELD, daily_id, after, until]
            ):
                played.add(player_id)
                if counts:
                    counted[player_id] = tuple(game)
        entries = {
            (player_id, board): tuple(values)
            for player_id, board, *values in _rows(_ENTRIES_OF_CHUNK, [date, after, until])
        }
        # A record can say the player played that day when they did not.
        claimed = set(
            PlayerStats.objects.filter(
                last_date=date, player_id__gt=after, player_id__lte=until
            ).values_list("player_id", flat=True)
        )
        players = sorted(played | claimed | {player_id for player_id, _ in entries})
        records = _records_of(players)
        stored_records = {
            stats.player_id: stats_record(stats)
            for stats in PlayerStats.objects.filter(player_id__in=players)
        }
    # A mirror being built is checked too: the records it holds already.
    mirrored = mirror.mirror_read(date=date, player_ids=players, built=True)
    return _Chunk(
        counted, played, entries, claimed, records, stored_records, mirrored, mirror_complete
    )


def _records_of(player_ids: Sequence[int]) -> dict[int, Record]:
    """Each player's record folded from all their counted games (as
    `player_stats_recompute` folds it)."""
    days = (
        Game.objects.filter(
            player_id__in=player_ids,
            daily__isnull=False,
            ranked=True,
            assisted=False,
            voided_at__isnull=True,
            player__is_active=True,
        )
        .exclude(review_state=ReviewState.HELD)
        .order_by("player_id", "daily__date")
        .values_list("player_id", "daily__date", "won", "score", "moves", "daily__par")
    )
    return {
        player_id: record_fold(row[1:] for row in rows)
        for player_id, rows in itertools.groupby(days.iterator(), key=lambda row: row[0])
    }


def _chunk_compare(chunk: _Chunk, found: Found) -> tuple[set[int], set[int], set[int]]:
    """Report the chunk's differences; the players whose entries, mirror record and
    record differ."""
    entries_off: set[int] = set()
    mirror_off: set[int] = set()
    records_off: set[int] = set()
    players = chunk.played | chunk.claimed | {player_id for player_id, _ in chunk.entries}
    for player_id in sorted(players):
        game = chunk.counted.get(player_id)
        for board in BOARDS:
            counts = game is not None and (board == Board.SCORE or game[3])
            expected = _expected_entry(board, game) if game is not None and counts else None
            stored = chunk.entries.get((player_id, board))
            if expected != stored:
                entries_off.add(player_id)
                found(
                    Drift(
                        "entry",
                        player_id,
                        f"{board} board: stored {_entry_text(stored)}, "
                        f"games give {_entry_text(expected)}",
                    )
                )
        if chunk.mirrored is not None:
            fields = chunk.mirrored.get(player_id)
            expected_record = _game_record(game)
            if fields is not None and fields[mirror.KIND] == mirror.PENDING:
                pass  # a writer's commit is on its way; readers read the table meanwhile
            elif fields is None and not chunk.mirror_complete:
                pass  # not built yet: the build adds it
            elif tuple(fields or mirror.NO_ENTRY) != tuple(expected_record):
                mirror_off.add(player_id)
                found(
                    Drift(
                        "mirror",
                        player_id,
                        f"stored {'nothing' if fields is None else tuple(fields)}, "
                        f"games give {tuple(expected_record)}",
                    )
                )
        record = chunk.records.get(player_id, Record())
        stored_record = chunk.stored_records.get(player_id, Record())
        differing = [
            name for name in RECORD_FIELDS if getattr(record, name) != getattr(stored_record, name)
        ]
        if differing:
            records_off.add(player_id)
            found(
                Drift(
                    "record",
                    player_id,
                    ", ".join(
                        f"{name} stored {getattr(stored_record, name)!r}, "
                        f"games give {getattr(record, name)!r}"
                        for name in differing
                    ),
                )
            )
    return entries_off, mirror_off, records_off


def _player_mend(
    *, player_id: int, date: datetime.date, entries: bool, mirrored: bool, record: bool
) -> None:
    """Put one player's stores of `date` right, from their games read under their lock."""
    with transaction.atomic():
        player = get_user_model().objects.select_for_update().get(pk=player_id)
        if entries:
            # The mirror follows; the counters are the counters step's to mend.
            board_entries_rewrite(player=player, date=date)
        elif mirrored:
            version = mirror.mirror_pending(date=date, player_id=player_id)
            if version is not None:
                new = day_records(date=date, player_ids=[player_id])[player_id]
                mirror.mirror_store(date=date, player_id=player_id, record=new, version=version)
        if record:
            player_stats_recompute(player=player)


# --- The whole board: counters, final ranks, results ------------------------------------------

_EXPECTED_BUCKETS = f"""
SELECT b.board, CASE WHEN b.board = 'score' THEN {SCORE_KEY_SQL} ELSE g.moves END, count(*)
FROM games_game g JOIN auth_user u ON u.id = g.player_id
CROSS JOIN (SELECT 'score' AS board UNION ALL SELECT 'moves') AS b
WHERE g.daily_id = %s AND {COUNTED_SQL} AND (b.board = 'score' OR g.won)
GROUP BY 1, 2
"""


def _counters_check(
    date: datetime.date, daily_id: int | None, repair: bool, found: Found
) -> dict[tuple[str, int], int]:
    """Compare the stored counters with the games' (one snapshot); with `repair` add the
    differences. Returns the games' buckets {(board, key1): players}."""
    with _snapshot():
        expected: dict[tuple[str, int], int] = {}
        if daily_id is not None:
            rows = _rows(_EXPECTED_BUCKETS, [daily_id, ReviewState.HELD])
            expected = {(board, key1): players for board, key1, players in rows}
        stored_buckets = {
            (board, key1): players for board, key1, players in board_buckets(date=date)
        }
        stored_totals = board_totals(date=date)
    totals_off: dict[str, int] = {}
    for board in BOARDS:
        games_give = sum(n for (b, _), n in expected.items() if b == board)
        stored = stored_totals.get(board, 0)
        if stored != games_give:
            found(
                Drift(
                    "counter",
                    None,
                    f"{board} board total: stored {stored}, games give {games_give}",
                )
            )
        totals_off[board] = games_give - stored
    # Bucket by bucket in ascending order; a bucket's change moves its board's total too.
    for board, key1 in sorted(expected.keys() | stored_buckets.keys()):
        games_give, stored = expected.get((board, key1), 0), stored_buckets.get((board, key1), 0)
        if stored != games_give:
            found(
                Drift(
                    "counter",
                    None,
                    f"{board} board bucket {key1}: stored {stored}, games give {games_give}",
                )
            )
            if repair:
                board_counter_add(date=date, board=board, key1=key1, delta=games_give - stored)
                totals_off[board] -= games_give - stored
    if repair:
        for board, delta in totals_off.items():
            board_total_mend(date=date, board=board, delta=delta)
    return expected


def _final_ranks_sql(board: str) -> str:
    key1, key2, counts = _BOARD_KEYS[board]
    return f"""
WITH expected AS (
    SELECT g.player_id, row_number() OVER (
        ORDER BY {key1}, {key2}, coalesce(g.duration_ms, {DURATION_UNKNOWN}), g.created_at, g.id
    ) AS rank
    FROM games_game g JOIN auth_user u ON u.id = g.player_id
    WHERE g.daily_id = %s AND {COUNTED_SQL} AND {counts}
), stored AS (
    SELECT e.player_id, f.rank FROM leaderboards_boardentry e
    JOIN leaderboards_finalrank f ON f.entry_id = e.id
    WHERE e.date = %s AND e.board = %s
)
SELECT coalesce(x.player_id, s.player_id), s.rank, x.rank
FROM expected x FULL JOIN stored s ON s.player_id = x.player_id
WHERE x.rank IS DISTINCT FROM s.rank
ORDER BY 1
"""


def _final_ranks_check(
    date: datetime.date, daily_id: int | None, repair: bool, found: Found
) -> None:
    for board in BOARDS:
        off = False
        for player_id, stored, expected in rows_streamed(
            _final_ranks_sql(board), [daily_id, ReviewState.HELD, date, board]
        ):
            off = True
            found(
                Drift(
                    "final_rank",
                    player_id,
                    f"{board} board: stored {stored or 'none'}, games give {expected or 'none'}",
                )
            )
        if off and repair:
            # The entries are mended by now: rank them again (a rank already
            # right is not written), and drop the ranks of entries gone.
            final_ranks_store(date=date, board=board, batch=CLOSE_BATCH)


def _distributions(expected: dict[tuple[str, int], int]) -> tuple[list[list[int]], ...]:
    score = score_distribution(
        (key1, n) for (board, key1), n in expected.items() if board == Board.SCORE
    )
    moves = sorted([key1, n] for (board, key1), n in expected.items() if board == Board.MOVES)
    return score, moves


def _day_result_check(
    date: datetime.date, expected: dict[tuple[str, int], int], repair: bool, found: Found
) -> None:
    result = DayResult.objects.filter(date=date).first()
    if result is None:
        return
    score, moves = _distributions(expected)
    games_give = {
        "players": sum(n for (board, _), n in expected.items() if board == Board.SCORE),
        "won": sum(n for (board, _), n in expected.items() if board == Board.MOVES),
        "score_distribution": score,
        "moves_distribution": moves,
    }
    differing = {
        name: value for name, value in games_give.items() if getattr(result, name) != value
    }
    for name, value in differing.items():
        found(
            Drift(
                "day_result",
                None,
                f"{name}: stored {getattr(result, name)!r}, games give {value!r}",
            )
        )
    if differing and repair:
        DayResult.objects.filter(pk=result.pk).update(**differing)


# --- The check ---------------------------------------------------------------------------


def board_check(
    *,
    date: datetime.date,
    repair: bool = False,
    on_drift: Found | None = None,
    then: Sequence[DayCheck] = (),
) -> CheckResult:
    """Recompute the day's derived stores from its games and report every difference
    (to `on_drift` as found, and counted in the result); with `repair`, mend them.

    The per-player stores first (entries, the records the day's mirror holds,
    records), then the counters, then whether a day over was closed, then, for
    a closed day, the final ranks and results, then the checks `then` (an app's
    own stores: the leagues'). The result is stored as the day's `BoardCheck`,
    for the operators.
    """
    started = time.monotonic()
    result = CheckResult(date=date, repaired=repair)

    def found(drift: Drift) -> None:
        result.drift[drift.kind] += 1
        if len(result.examples) < EXAMPLES_KEPT:
            result.examples.append(str(drift))
        if on_drift is not None:
            on_drift(drift)

    daily_id = DailyDeal.objects.filter(date=date).values_list("id", flat=True).first()
    result.mirror_checked = mirror.mirror_complete(date=date)  # else: what it holds
    for after, until in _chunks(daily_id):
        chunk = _chunk_read(date, daily_id, after, until, result.mirror_checked)
        entries_off, mirror_off, records_off = _chunk_compare(chunk, found)
        if repair:
            for player_id in sorted(entries_off | mirror_off | records_off):
                _player_mend(
                    player_id=player_id,
                    date=date,
                    entries=player_id in entries_off,
                    mirrored=player_id in mirror_off,
                    record=player_id in records_off,
                )
            # The live boards hear of the chunk's mended entries at once (one
            # announcement, not one per player).
            if entries_off:
                live.board_changed(date=date, orders=BOARDS, players=entries_off)
    expected = _counters_check(date, daily_id, repair, found)
    if date in days_to_close(now=timezone.now() - JOB_GRACE):
        found(Drift("day_unclosed", None, "the day is over and its close never ran"))
        if repair:
            day_close(date=date)
    if DayResult.objects.filter(date=date).exists():
        _final_ranks_check(date, daily_id, repair, found)
        _day_result_check(date, expected, repair, found)
    for check in then:
        check(date=date, repair=repair, found=found)
    result.seconds = time.monotonic() - started
    BoardCheck.objects.update_or_create(
        date=date,
        defaults={
            "checked_at": timezone.now(),
            "seconds": result.seconds,
            "repaired": repair,
            "drift": dict(result.drift),
            "examples": result.examples,
        },
    )
    return result
