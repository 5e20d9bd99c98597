"""Reads of the leaderboards, shared by the REST API, the websocket snapshot and the pages.

Every board is read through the composite index
(date, board, key1, key2, duration_ms, submitted_at, game_id): a page is an index range, the
neighbours of a player are two short index scans from their entry, and a rank
adds the stored bucket counts of the better `key1` values (a result and a
score, or a move count) to a count over the shorter side of the player's own bucket, so a rank
costs about the same anywhere on a board of a million.

The reads are plain SQL (row-value comparisons, which the ORM cannot express,
and few round trips); they run on PostgreSQL and SQLite alike.

Results are JSON-ready: dates and times are ISO 8601 strings.
"""

from __future__ import annotations

import bisect
import datetime
import functools
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Q
from django.utils.translation import gettext, ngettext

from easyharp_site.dates import today, utc_aware
from games.models import DailyDeal, Game, ReviewState
from games.rules import UNDO_TOKEN, Deal, foundations_course
from games.selectors import daily_day_number, daily_deal_first_date, ranked_game_of
from leaderboards import mirror
from leaderboards.audiences import AudienceSql
from leaderboards.badges import (
    BADGE_MARKS,
    Badge,
    CountedDay,
    month_badges,
    month_last,
    streak_window_start,
)
from leaderboards.mirror import DURATION, GAME, KIND, MOVES, SCORE, SUBMITTED
from leaderboards.models import (
    DURATION_UNKNOWN,
    Board,
    BoardEntry,
    DayResult,
    PlayerStats,
    board_sort_key,
    score_bucket,
)
from leaderboards.records import (
    MOVES_OVER_PAR_BUCKETS,
    RECORD_FIELDS,
    Record,
    moves_over_par_ranges,
)

PAGE_LIMIT_MAX = 100
# Rank counts run with growing caps on both sides until one side is exhausted.
_RANK_CAPS = (1_024, 32_768, 1_048_576)
# The sort key of an entry, in index order; a row's first _KEY_LENGTH columns.
_ROW = "(e.key1, e.key2, e.duration_ms, e.submitted_at, e.game_id)"
_ORDER_ASC = "e.key1, e.key2, e.duration_ms, e.submitted_at, e.game_id"
_ORDER_DESC = "e.key1 DESC, e.key2 DESC, e.duration_ms DESC, e.submitted_at DESC, e.game_id DESC"
_KEY_LENGTH = 5
_KEY_MARKS = ", ".join(["%s"] * _KEY_LENGTH)


# An entry's final rank (`f.rank`, NULL while its day runs).
_FINAL = "LEFT JOIN leaderboards_finalrank f ON f.entry_id = e.id"

_COLUMNS = (
    "e.key1, e.key2, e.duration_ms, e.submitted_at, e.game_id, e.score, e.moves, e.won, u.username"
)


@functools.cache
def _from() -> str:
    # The user table is known only once the apps are loaded.
    users = get_user_model()._meta.db_table
    return f"FROM leaderboards_boardentry e JOIN {users} u ON u.id = e.player_id"


def _select() -> str:
    """The entries of one board (parameters: date, board), as rows `_entry_dict` reads."""
    return f"SELECT {_COLUMNS} {_from()} WHERE e.date = %s AND e.board = %s"


def _rows(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows: list[tuple[Any, ...]] = cursor.fetchall()
        return rows


def _key(row: tuple[Any, ...]) -> list[Any]:
    """The sort key of a row as query parameters."""
    key1, key2, duration_ms, submitted_at, game = row[:_KEY_LENGTH]
    at = connection.ops.adapt_datetimefield_value(utc_aware(submitted_at))
    return [key1, key2, duration_ms, at, game]


def _entry_dict(row: tuple[Any, ...], rank: int) -> dict[str, Any]:
    key1, key2, duration_ms, submitted_at, game, score, moves, won, username = row
    return {
        "rank": rank,
        "player": username,
        "score": score,
        "moves": moves,
        "won": bool(won),
        "duration_ms": None if duration_ms == DURATION_UNKNOWN else duration_ms,
        "game": game,
        "submitted_at": utc_aware(submitted_at)
        .astimezone(datetime.UTC)
        .isoformat()
        .replace("+00:00", "Z"),
    }


# A day's counts: the folded counters plus the changes not folded yet
# (`BoardCountChange`, `leaderboards.services.board_counts_fold`).
_BUCKETS = (
    "(SELECT date, board, key1, players FROM leaderboards_boardbucket"
    " UNION ALL SELECT date, board, key1, players FROM leaderboards_boardcountchange)"
)
_TOTALS = (
    "(SELECT date, board, players FROM leaderboards_boardtotal"
    " UNION ALL SELECT date, board, players FROM leaderboards_boardcountchange)"
)


def board_totals(*, date: datetime.date) -> dict[str, int]:
    """The number of players on each board of `date`."""
    return {
        board: int(players)
        for board, players in _rows(
            f"SELECT board, SUM(players) FROM {_TOTALS} t WHERE date = %s GROUP BY board", [date]
        )
    }


def board_buckets(*, date: datetime.date) -> list[tuple[str, int, int]]:
    """`(board, key1, players)` of every bucket of `date` that holds players, in order."""
    return [
        (board, key1, int(players))
        for board, key1, players in _rows(
            f"SELECT board, key1, SUM(players) FROM {_BUCKETS} b WHERE date = %s"
            " GROUP BY board, key1 HAVING SUM(players) > 0 ORDER BY board, key1",
            [date],
        )
    ]


def score_distribution(buckets: Iterable[tuple[int, int]]) -> list[list[int]]:
    """[[score, players], ...] by ascending score, from the score board's `(key1, players)`
    buckets (a won and a lost bucket of one score make one)."""
    players: Counter[int] = Counter()
    for key1, count in buckets:
        players[score_bucket(key1)[1]] += count
    return [[score, players[score]] for score in sorted(players)]


def _page(
    date: datetime.date,
    order: str,
    number: int | None,
    total: int,
    offset: int,
    limit: int,
    entries: list[dict[str, Any]],
) -> dict[str, Any]:
    """A page of a board as every read gives it (the API's `LeaderboardPage`)."""
    return {
        "date": date.isoformat(),
        "deal": _deal_code(number),
        "order": order,
        "total": total,
        "offset": offset,
        "limit": limit,
        "entries": entries,
    }


def leaderboard_total(*, date: datetime.date, order: str) -> int:
    """Number of players on the board `order` of `date`."""
    return board_totals(date=date).get(order, 0)


@functools.lru_cache(maxsize=64)
def _deal_code(number: int | None) -> str | None:
    # Building a Deal shuffles its cards: cache the few codes a server shows.
    if number is None:
        return None
    return Deal(number).code


_TOTAL_AND_DEAL_SQL = f"""
    (SELECT SUM(players) FROM {_TOTALS} t WHERE date = %s AND board = %s),
    (SELECT number FROM games_dailydeal WHERE date = %s)
"""
# Inside the player's bucket (same key1), the rest of the sort key decides.
_IN_BUCKET = "(e.key2, e.duration_ms, e.submitted_at, e.game_id)"
_RANK_SQL = f"""
SELECT
    (SELECT COALESCE(SUM(players), 0) FROM {_BUCKETS} b
        WHERE date = %s AND board = %s AND key1 < %s),
    (SELECT SUM(players) FROM {_BUCKETS} b WHERE date = %s AND board = %s AND key1 = %s),
    (SELECT count(*) FROM (
        SELECT 1 FROM leaderboards_boardentry e
        WHERE e.date = %s AND e.board = %s AND e.key1 = %s AND {_IN_BUCKET} < (%s, %s, %s, %s)
        LIMIT %s) better),
    (SELECT count(*) FROM (
        SELECT 1 FROM leaderboards_boardentry e
        WHERE e.date = %s AND e.board = %s AND e.key1 = %s AND {_IN_BUCKET} > (%s, %s, %s, %s)
        LIMIT %s) worse),
    {_TOTAL_AND_DEAL_SQL}
"""


def _total_and_deal(date: datetime.date, order: str) -> tuple[int, int | None]:
    """The board's player count and the day's deal number, in one round trip."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {_TOTAL_AND_DEAL_SQL}", [date, order, date])
        total, number = cursor.fetchone()
    return total or 0, number


def _rank(date: datetime.date, order: str, row: tuple[Any, ...]) -> tuple[int, int, int | None]:
    """(rank, total, deal number) of an entry.

    The rank is 1 + the players of every bucket before the entry's (a sum over
    at most a few thousand counter rows) + the entries before it inside its own
    bucket. That last count runs on the shorter side of the bucket: both sides
    are counted with a cap until one is exhausted. One statement per cap, so
    the counts, the counters and the total come from one snapshot.
    """
    key1, *rest = _key(row)
    with connection.cursor() as cursor:
        for cap in (*_RANK_CAPS, None):
            limit = cap if cap is not None else 2**62
            cursor.execute(
                _RANK_SQL,
                [date, order, key1, date, order, key1]
                + [date, order, key1, *rest, limit, date, order, key1, *rest, limit]
                + [date, order, date],
            )
            above, bucket, better, worse, total, number = cursor.fetchone()
            if better < limit:
                return above + better + 1, total or 0, number
            if worse < limit:
                return above + (bucket or 0) - worse, total or 0, number
    raise AssertionError("unreachable: the last count has no cap")


def _player_row(date: datetime.date, order: str, player: User) -> tuple[Any, ...] | None:
    rows = _rows(f"{_select()} AND e.player_id = %s", [date, order, player.pk])
    return rows[0] if rows else None


def leaderboard_page(
    *, date: datetime.date, order: str, limit: int = PAGE_LIMIT_MAX, offset: int = 0
) -> dict[str, Any]:
    """One page of a day's board: `{date, deal, order, total, offset, limit, entries}`."""
    limit = max(0, min(limit, PAGE_LIMIT_MAX))
    offset = max(0, offset)
    rows = _rows(
        f"{_select()} ORDER BY {_ORDER_ASC} LIMIT %s OFFSET %s", [date, order, limit, offset]
    )
    total, number = _total_and_deal(date, order)
    entries = [_entry_dict(row, offset + i + 1) for i, row in enumerate(rows)]
    return _page(date, order, number, total, offset, limit, entries)


def leaderboard_entry(*, date: datetime.date, order: str, player: User) -> dict[str, Any] | None:
    """The player's own entry on the board with its rank, or None when not on it."""
    row = _player_row(date, order, player)
    if row is None:
        return None
    rank, _, _ = _rank(date, order, row)
    return _entry_dict(row, rank)


# Players or buckets per statement: well under SQLite's and PostgreSQL's
# parameter limits.
_CHUNK = 400


def _chunks(values: Sequence[Any]) -> list[Sequence[Any]]:
    return [values[start : start + _CHUNK] for start in range(0, len(values), _CHUNK)]


def leaderboard_entries_of(
    *, date: datetime.date, order: str, player_ids: Collection[int]
) -> dict[int, dict[str, Any]]:
    """The entries with their ranks of many players at once, by player id.

    Players who are not on the board are left out. A rank is the players of
    the buckets before the entry's (one read of the board's bucket counters)
    plus its place in its own bucket, found among the sort keys of the
    buckets that hold one of these players (read once, however many players
    share them). So three plain statements (per 400 players) serve any number
    of players, and their cost grows with the entries that share a `key1`
    with one of them, not with the size of the board. Each statement is a
    plain index range: no join whose plan could go wrong on stale statistics.
    What the live boards use to give every signed-in watcher their own rank
    with each update.
    """
    ids = sorted(set(player_ids))
    rows: list[tuple[Any, ...]] = []
    for chunk in _chunks(ids):
        placeholders = ", ".join(["%s"] * len(chunk))
        rows += _rows(
            f"SELECT e.player_id, {_COLUMNS} {_from()} "
            f"WHERE e.date = %s AND e.board = %s AND e.player_id IN ({placeholders})",
            [date, order, *chunk],
        )
    if not rows:
        return {}
    above: dict[int, int] = {}
    running = 0
    for key1, players in _rows(
        f"SELECT key1, SUM(players) FROM {_BUCKETS} b "
        "WHERE date = %s AND board = %s GROUP BY key1 ORDER BY key1",
        [date, order],
    ):
        above[key1] = running
        running += players
    buckets: dict[int, list[tuple[Any, ...]]] = {}
    for chunk in _chunks(sorted({row[1] for row in rows})):
        placeholders = ", ".join(["%s"] * len(chunk))
        for key1, key2, duration_ms, submitted_at, game in _rows(
            f"SELECT {_ORDER_ASC} FROM leaderboards_boardentry e "
            f"WHERE e.date = %s AND e.board = %s AND e.key1 IN ({placeholders}) "
            f"ORDER BY {_ORDER_ASC}",
            [date, order, *chunk],
        ):
            buckets.setdefault(key1, []).append((key2, duration_ms, utc_aware(submitted_at), game))
    found: dict[int, dict[str, Any]] = {}
    for player_id, *row in rows:
        key1, key2, duration_ms, submitted_at, game = row[:_KEY_LENGTH]
        # Python orders these keys as the index does (SQLite's naive times made UTC).
        in_bucket = (key2, duration_ms, utc_aware(submitted_at), game)
        place = bisect.bisect_left(buckets[key1], in_bucket) + 1
        found[player_id] = _entry_dict(tuple(row), above[key1] + place)
    return found


# A board narrowed to an audience, ranked among it in one statement: the
# audience's entries (one lookup each on the day's board's unique (date, board,
# player) index), numbered in board order, then only the rows asked for, with
# their players' names.
_AMONG_SQL = f"""
WITH among AS (
    SELECT e.player_id, {_COLUMNS.removesuffix(", u.username")},
           row_number() OVER (ORDER BY {_ORDER_ASC}) AS place
    FROM leaderboards_boardentry e
    WHERE e.date = %s AND e.board = %s AND {{narrowing}}
)
SELECT t.total, t.number, a.player_id,
       {_COLUMNS.replace("e.", "a.")}, a.place
FROM (SELECT (SELECT count(*) FROM among) AS total,
             (SELECT number FROM games_dailydeal WHERE date = %s) AS number) t
LEFT JOIN among a ON (a.place > %s AND a.place <= %s) OR a.player_id IN ({{mine}})
LEFT JOIN {{users}} u ON u.id = a.player_id
ORDER BY a.place
"""


def _among_rows(
    date: datetime.date,
    order: str,
    audience: AudienceSql,
    first: int,
    last: int,
    mine: Sequence[int],
) -> tuple[int, int | None, list[tuple[Any, ...]]]:
    """(total, deal number, rows `(player_id, *columns, place)`) of the places in
    (`first`, `last`] and of the players `mine`."""
    subquery, params = audience
    narrowing = f"e.player_id IN ({subquery})"
    if connection.vendor == "postgresql":
        # The ids as one sorted array: one index scan walks them in order,
        # faster than a lookup per row of the subquery (docs/PERFORMANCE.md).
        narrowing = (
            f"e.player_id = ANY(ARRAY(SELECT id FROM ({subquery}) AS audience(id) ORDER BY id))"
        )
    statement = _AMONG_SQL.format(
        users=get_user_model()._meta.db_table,
        narrowing=narrowing,
        mine=", ".join(["%s"] * len(mine)) if mine else "NULL",
    )
    rows = _rows(statement, [date, order, *params, date, first, last, *mine])
    total, number = rows[0][:2]
    return total or 0, number, [row[2:] for row in rows if row[2] is not None]


_DAY_RECORD_COLUMNS = "player_id, won, game_id, score, moves, duration_ms, submitted_at"


def _day_record_rows(rows: list[tuple[Any, ...]]) -> list[tuple[int, mirror.DayRecord]]:
    """(player id, record) of rows of `_DAY_RECORD_COLUMNS` from the score board,
    which holds every ranked game."""
    return [
        (
            player_id,
            mirror.game_record(
                game_id=game_id,
                score=score,
                moves=moves,
                won=won,
                duration_ms=duration_ms,
                submitted_at=submitted_at,
            ),
        )
        for player_id, won, game_id, score, moves, duration_ms, submitted_at in rows
    ]


def day_records(*, date: datetime.date, player_ids: Sequence[int]) -> dict[int, mirror.DayRecord]:
    """Each player's record of `date` for the board mirror, read from the table
    (`NO_ENTRY` without entries)."""
    marks = ", ".join(["%s"] * len(player_ids))
    rows = _rows(
        f"SELECT {_DAY_RECORD_COLUMNS} FROM leaderboards_boardentry "
        f"WHERE date = %s AND board = 'score' AND player_id IN ({marks})",
        [date, *player_ids],
    )
    return {**dict.fromkeys(player_ids, mirror.NO_ENTRY), **dict(_day_record_rows(rows))}


def day_records_after(
    *, date: datetime.date, after: int, limit: int
) -> list[tuple[int, mirror.DayRecord]]:
    """The records of `date` of the next `limit` players with an entry, by player
    id after `after` (the board mirror's build reads the day in such batches)."""
    rows = _rows(
        f"SELECT {_DAY_RECORD_COLUMNS} FROM leaderboards_boardentry "
        "WHERE date = %s AND board = 'score' AND player_id > %s ORDER BY player_id LIMIT %s",
        [date, after, limit],
    )
    return _day_record_rows(rows)


# A board read from the mirror: its keys in board order (`_ORDER_ASC`'s columns,
# then the player), and the records they come from.
_Ranking = tuple[list[tuple[int, ...]], dict[int, "mirror.Fields"]]


def _mirror_ranking(date: datetime.date, order: str, audience: AudienceSql) -> _Ranking | None:
    """The audience's entries of `date` in board order, from the day's board mirror
    (`leaderboards.mirror`): the audience's ids, their records in one request
    (those pending read from the table), ranked here. None when the mirror is
    off, unavailable or not complete for the day (then the table is read)."""
    subquery, params = audience
    player_ids = list({row[0]: None for row in _rows(subquery, params)})
    records = mirror.mirror_read(date=date, player_ids=player_ids)
    if records is None:
        return None
    pending = [player_id for player_id, r in records.items() if r[KIND] == mirror.PENDING]
    if pending:
        records.update(day_records(date=date, player_ids=pending))
    # `_ORDER_ASC`, whose (key1, key2) are `board_sort_key`'s, then the player.
    on_board = mirror.ON_SCORE if order == Board.SCORE else mirror.ON_MOVES
    keyed = (
        (
            *board_sort_key(
                board=order, score=r[SCORE], moves=r[MOVES], won=bool(r[KIND] & mirror.WON)
            ),
            r[DURATION],
            r[SUBMITTED],
            r[GAME],
            player_id,
        )
        for player_id, r in records.items()
        if r[KIND] & on_board
    )
    return sorted(keyed), records


def _mirror_rows(
    date: datetime.date,
    order: str,
    ranking: _Ranking,
    first: int,
    last: int,
    mine: Sequence[int],
) -> tuple[int, int | None, list[tuple[Any, ...]]]:
    """`_among_rows` of a ranking from the mirror: the rows of the places in
    (`first`, `last`] and of the players `mine`, with the names of their players
    and the day's deal number (one statement)."""
    ranked, records = ranking
    wanted = set(mine)
    chosen = [
        (place, key[-1])
        for place, key in enumerate(ranked, start=1)
        if first < place <= last or key[-1] in wanted
    ]
    shown = [player_id for _, player_id in chosen]
    if connection.vendor == "postgresql":
        # One text for any number of players: psycopg parses it once.
        narrowing, params = "= ANY(%s)", [date, shown]
    else:
        narrowing = f"IN ({', '.join(['%s'] * len(shown)) if shown else 'NULL'})"
        params = [date, *shown]
    users = get_user_model()._meta.db_table
    named = _rows(
        f"SELECT (SELECT number FROM games_dailydeal WHERE date = %s), u.id, u.username "
        f"FROM (SELECT 1 AS one) d LEFT JOIN {users} u ON u.id {narrowing}",
        params,
    )
    names = {player_id: username for _, player_id, username in named}
    rows = []
    for place, player_id in chosen:
        r = records[player_id]
        won = bool(r[KIND] & mirror.WON)
        key1, key2 = board_sort_key(board=order, score=r[SCORE], moves=r[MOVES], won=won)
        rows.append(
            (player_id, key1, key2, r[DURATION], mirror.moment(r[SUBMITTED]), r[GAME])
            + (r[SCORE], r[MOVES], won, names.get(player_id), place)
        )
    return len(ranked), named[0][0], rows


def leaderboard_among(
    *,
    date: datetime.date,
    order: str,
    audience: AudienceSql,
    limit: int = PAGE_LIMIT_MAX,
    offset: int = 0,
    mine: Collection[int] = (),
    around: int | None = None,
) -> dict[str, Any]:
    """A day's board narrowed to an audience, ranked among it (a friends or league board).

    `audience` is a subquery giving the players' ids, with its parameters
    (`leaderboards.audiences`). Same shape as `leaderboard_page`, with `total`
    the number of the audience on the board, plus `mine`: the entry (ranked
    among them) of each player id in `mine`, None when they are not on it.
    With `around` (a player id on the board), the page is the one centred on
    that player instead of `offset`'s.

    Every audience is read one way, from the day's entries themselves, so a
    change of who belongs shows at once. When the day's board mirror is
    complete (`leaderboards.mirror`): the audience's ids, one request to Redis
    for their records, the ranking here, and the names of the players shown,
    with or without `around`. Otherwise one statement (two with `around`), one
    index lookup per player of the audience on the board's unique (date,
    board, player) index, the entries numbered in the database. The cost grows
    with the audience (a league holds at most 1,000 players, a player follows
    at most 1,000), never with the size of the day's board.
    """
    limit = max(0, min(limit, PAGE_LIMIT_MAX))
    offset = max(0, offset)
    wanted = sorted(set(mine) | ({around} if around is not None else set()))
    ranking = _mirror_ranking(date, order, audience)
    if around is not None:
        if ranking is not None:
            total = len(ranking[0])
            found = (place for place, key in enumerate(ranking[0], start=1) if key[-1] == around)
            place = next(found, None)
        else:
            total, _, rows = _among_rows(date, order, audience, 0, 0, [around])
            place = rows[0][-1] if rows else None
        if place is not None and limit:
            offset = max(0, min(place - 1 - (limit - 1) // 2, total - limit))
    if ranking is not None:
        total, number, rows = _mirror_rows(date, order, ranking, offset, offset + limit, wanted)
    else:
        total, number, rows = _among_rows(date, order, audience, offset, offset + limit, wanted)
    places = {row[0]: row for row in rows}
    shown = [_entry_dict(row[1:-1], row[-1]) for row in rows if offset < row[-1] <= offset + limit]
    return {
        **_page(date, order, number, total, offset, limit, shown),
        "mine": {
            player_id: (
                _entry_dict(places[player_id][1:-1], places[player_id][-1])
                if player_id in places
                else None
            )
            for player_id in mine
        },
    }


def leaderboard_around(
    *, date: datetime.date, order: str, player: User, limit: int = PAGE_LIMIT_MAX
) -> dict[str, Any] | None:
    """A page of up to `limit` entries centred on the player, or None when not on the board.

    Same shape as `leaderboard_page`, plus `me`, the player's own entry. Near
    either end of the board the page shifts so that it stays full.
    """
    limit = max(1, min(limit, PAGE_LIMIT_MAX))
    row = _player_row(date, order, player)
    if row is None:
        return None
    rank, total, number = _rank(date, order, row)
    # Entries above and below the player, knowing how many each side has.
    above, below = rank - 1, max(total - rank, 0)
    take_above = min(above, max((limit - 1) // 2, limit - 1 - below))
    take_below = min(below, limit - 1 - take_above)
    # Both neighbourhoods in one statement (each side in its own subquery, so
    # that it keeps its own order and limit).
    key = _key(row)
    side_rows = _rows(
        f"SELECT * FROM (SELECT 0 AS side, a.* FROM ({_select()} AND {_ROW} < ({_KEY_MARKS}) "
        f"ORDER BY {_ORDER_DESC} LIMIT %s) a) above "
        f"UNION ALL "
        f"SELECT * FROM (SELECT 1 AS side, b.* FROM ({_select()} AND {_ROW} > ({_KEY_MARKS}) "
        f"ORDER BY {_ORDER_ASC} LIMIT %s) b) below",
        [date, order, *key, take_above, date, order, *key, take_below],
    )
    # UNION ALL keeps no order between its parts: sort each side again.
    above_rows = sorted(r[1:] for r in side_rows if r[0] == 0)
    below_rows = sorted(r[1:] for r in side_rows if r[0] == 1)
    window = [*above_rows, row, *below_rows]
    first_rank = rank - len(above_rows)
    entries = [_entry_dict(r, first_rank + i) for i, r in enumerate(window)]
    return {
        **_page(date, order, number, total, first_rank - 1, limit, entries),
        "me": _entry_dict(row, rank),
    }


def player_board_results(
    *, player: User, limit: int = 30, held: bool = False
) -> list[dict[str, Any]]:
    """The player's results of their last `limit` days, newest first: per day, their entry
    on each board, with its final rank once the day has closed, and whether their ranked
    game of the day was `assisted` (shown, on no board). With `held` (for the player's own
    eyes only), a ranked game held for review is listed too, marked `held`."""
    rows = _rows(
        f"SELECT e.date, e.board, f.rank, {_COLUMNS} {_from()} {_FINAL} "
        "WHERE e.player_id = %s ORDER BY e.date DESC LIMIT %s",
        [player.pk, limit * 2],
    )
    days: dict[datetime.date, dict[str, Any]] = {}

    def day_of(date: datetime.date, number: int | None) -> dict[str, Any]:
        return days.setdefault(
            date,
            {
                "date": date.isoformat(),
                "deal": _deal_code(number),
                "score": None,
                "moves": None,
                "assisted": False,
                "held": False,
            },
        )

    for date, board, final_rank, *row in rows:
        # A closed day's rank is the one stored when it closed; a running day's moves.
        rank, _, number = _rank(date, board, tuple(row))
        if final_rank is not None:
            rank = final_rank
        day_of(_as_date(date), number)[board] = _entry_dict(tuple(row), rank)
    # Ranked games the boards leave out are the player's results of their days all the same.
    off_board = (Q(assisted=True) | Q(review_state=ReviewState.HELD)) if held else Q(assisted=True)
    games = (
        Game.objects.filter(off_board, player=player, ranked=True, voided_at__isnull=True)
        .order_by("-daily__date")
        .values_list("daily__date", "deal_number", "assisted", "review_state")[:limit]
    )
    for date, number, assisted, state in games:
        day = day_of(date, number)
        day["assisted"] = assisted
        day["held"] = held and state == ReviewState.HELD
    return [days[date] for date in sorted(days, reverse=True)[:limit]]


# --- A player's record -------------------------------------------------------------------


def stats_record(stats: PlayerStats | None) -> Record:
    """A kept record as a `Record` (an empty one when nothing was counted yet)."""
    if stats is None or stats.last_date is None:
        return Record()
    return Record(**{name: getattr(stats, name) for name in RECORD_FIELDS})


def _percentile(rank: int, total: int) -> int:
    """The share of a board's players ranked below `rank`, in percent (100: the only one),
    a half rounded up as the pages' `percentile` (games/static/games/daily.js) rounds it."""
    if total <= 1:
        return 100
    return (200 * (total - rank) + total - 1) // (2 * (total - 1))


def _latest_standing(player: User) -> dict[str, Any] | None:
    """The player's place on the score board of the last day they are on it:
    `{date, rank, total, final}` (the final rank once the day has closed)."""
    rows = _rows(
        f"SELECT e.date, f.rank, {_COLUMNS} {_from()} {_FINAL} "
        "WHERE e.player_id = %s AND e.board = %s ORDER BY e.date DESC LIMIT 1",
        [player.pk, Board.SCORE],
    )
    if not rows:
        return None
    date, final_rank, *row = rows[0]
    if final_rank is not None:
        closed = DayResult.objects.filter(date=date).values_list("players", flat=True).first()
        if closed is not None:
            return {"date": date, "rank": final_rank, "total": closed, "final": True}
    rank, total, _ = _rank(date, Board.SCORE, tuple(row))
    return {"date": date, "rank": rank, "total": total, "final": False}


def player_stats(*, player: User, on: datetime.date | None = None) -> dict[str, Any]:
    """A player's record: `{played, won, win_rate, current_streak, max_streak, best_score,
    best_moves, moves_vs_par, percentile, percentile_date, percentile_rank,
    percentile_players}`.

    From their games on the boards only. One read of the kept record, and a
    rank on the last day they played (stored once it has closed): a few index
    reads whatever the number of days played. `on` is today unless given.
    """
    record = stats_record(PlayerStats.objects.filter(player=player).first())
    counts = record.moves_vs_par or [0] * len(MOVES_OVER_PAR_BUCKETS)
    standing = _latest_standing(player) if record.played else None
    return {
        "played": record.played,
        "won": record.won,
        "win_rate": round(record.won / record.played, 4) if record.played else None,
        "current_streak": record.current_streak(on or today()),
        "max_streak": record.max_streak,
        "best_score": record.best_score,
        "best_moves": record.best_moves,
        "moves_vs_par": [
            {"min": low, "max": high, "games": count}
            for (low, high), count in zip(moves_over_par_ranges(), counts, strict=True)
        ],
        "percentile": _percentile(standing["rank"], standing["total"]) if standing else None,
        "percentile_date": standing["date"].isoformat() if standing else None,
        "percentile_rank": standing["rank"] if standing else None,
        "percentile_players": standing["total"] if standing else None,
    }


def player_day(*, player: User, date: datetime.date) -> dict[str, Any] | None:
    """How the player's ranked game of `date` stands: `game_share`'s facts with `game`
    and `percentile` (on the score board, None off it); None without a ranked game."""
    game = ranked_game_of(player=player, date=date)
    if game is None:
        return None
    facts = game_share(game=game)
    facts["game"] = game
    facts["percentile"] = (
        _percentile(facts["rank"], facts["total"]) if facts["rank"] is not None else None
    )
    return facts


# --- A day's results ---------------------------------------------------------------------


def day_results(*, date: datetime.date) -> dict[str, Any]:
    """A day's results: `{date, players, won, score_distribution, moves_distribution, final}`.

    Frozen once the day has closed (`DayResult`); live before that, from the
    counters the boards keep (a few hundred counter rows at most, however many
    games the day has).
    """
    closed = DayResult.objects.filter(date=date).first()
    if closed is not None:
        players, won = closed.players, closed.won
        scores, moves = closed.score_distribution, closed.moves_distribution
    else:
        totals = board_totals(date=date)
        players, won = totals.get(Board.SCORE, 0), totals.get(Board.MOVES, 0)
        buckets = board_buckets(date=date)
        scores = score_distribution(
            (key1, count) for board, key1, count in buckets if board == Board.SCORE
        )
        moves = [[key1, count] for board, key1, count in buckets if board == Board.MOVES]
    return {
        "date": date.isoformat(),
        "players": players,
        "won": won,
        "score_distribution": [{"score": value, "players": n} for value, n in scores],
        "moves_distribution": [{"moves": value, "players": n} for value, n in moves],
        "final": closed is not None,
    }


def day_winners(*, date: datetime.date, limit: int = 3) -> list[dict[str, Any]]:
    """The top `limit` of a day's score board (its final ranks once closed)."""
    entries: list[dict[str, Any]] = leaderboard_page(date=date, order=Board.SCORE, limit=limit)[
        "entries"
    ]
    return entries


# --- The archive -------------------------------------------------------------------------

DAYS_LIMIT_MAX = 100


def _day_summaries(days: Sequence[DailyDeal], player: User | None) -> list[dict[str, Any]]:
    """Each day's deal, par, players, winner and (for `player`) their own result."""
    if not days:
        return []
    dates = [day.date for day in days]
    marks = ", ".join(["%s"] * len(dates))
    players = {
        _as_date(date): count
        for date, count in _rows(
            f"SELECT date, SUM(players) FROM {_TOTALS} t "
            f"WHERE board = %s AND date IN ({marks}) GROUP BY date",
            [Board.SCORE, *dates],
        )
    }
    # Each day's first entry in board order: one short index read per day.
    users = get_user_model()._meta.db_table
    winners = {
        _as_date(row[0]): row[1:]
        for row in _rows(
            " UNION ALL ".join(
                [
                    f"SELECT * FROM (SELECT e.date, u.username, e.score, e.moves, e.won "
                    f"FROM leaderboards_boardentry e JOIN {users} u ON u.id = e.player_id "
                    f"WHERE e.date = %s AND e.board = %s ORDER BY {_ORDER_ASC} LIMIT 1) w{i}"
                    for i in range(len(dates))
                ]
            ),
            [value for date in dates for value in (date, Board.SCORE)],
        )
    }
    mine: dict[Any, tuple[Any, ...]] = {}
    if player is not None:
        for row in _rows(
            f"SELECT e.date, e.score, e.moves, e.won, f.rank, {_ORDER_ASC} "
            f"FROM leaderboards_boardentry e {_FINAL} "
            f"WHERE e.player_id = %s AND e.board = %s AND e.date IN ({marks})",
            [player.pk, Board.SCORE, *dates],
        ):
            mine[_as_date(row[0])] = row[1:]
    summaries = []
    for day in days:
        winner = winners.get(day.date)
        own = mine.get(day.date)
        result = None
        if own is not None:
            score, moves, won, final_rank, *key = own
            rank = final_rank
            if rank is None:
                rank, _, _ = _rank(day.date, Board.SCORE, tuple(key))
            result = {"score": score, "moves": moves, "won": bool(won), "rank": rank}
        summaries.append(
            {
                "date": day.date.isoformat(),
                "deal": _deal_code(day.number),
                "par": day.par,
                "players": players.get(day.date, 0),
                "winner": {
                    "player": winner[0],
                    "score": winner[1],
                    "moves": winner[2],
                    "won": bool(winner[3]),
                }
                if winner
                else None,
                "me": result,
            }
        )
    return summaries


def _as_date(value: Any) -> datetime.date:
    # SQLite hands plain SQL's dates back as text.
    return value if isinstance(value, datetime.date) else datetime.date.fromisoformat(value)


def days_page(
    *,
    until: datetime.date,
    player: User | None = None,
    limit: int = 30,
    offset: int = 0,
    first: datetime.date | None = None,
) -> dict[str, Any]:
    """The days before `until` (and from `first`), newest first: `{total, offset, limit, days}`."""
    limit = max(1, min(limit, DAYS_LIMIT_MAX))
    served = DailyDeal.objects.filter(date__lt=until)
    if first is not None:
        served = served.filter(date__gte=first)
    days = list(served.order_by("-date")[offset : offset + limit])
    return {
        "total": served.count(),
        "offset": offset,
        "limit": limit,
        "days": _day_summaries(days, player),
    }


def days_between(
    *, first: datetime.date, last: datetime.date, player: User | None
) -> list[dict[str, Any]]:
    """The served days from `first` to `last` (a calendar's month), oldest first."""
    days = list(DailyDeal.objects.filter(date__gte=first, date__lte=last).order_by("date"))
    return _day_summaries(days, player)


# --- Sharing a game ---------------------------------------------------------------------


# Parts of a game whose foundation counts a share shows: a quarter each.
COURSE_PARTS = 4


def game_course(*, game: Game) -> list[int]:
    """Cards on the foundations after each quarter of the game's log (the engine's
    replay of the stored log): four counts of 0 to 104, from which nothing of the
    deal or of the play can be rebuilt. Costs one replay, about as cheap as reading
    the log, so it is not kept."""
    return foundations_course(game.deal_code, game.log, COURSE_PARTS)


def game_share(*, game: Game) -> dict[str, Any]:
    """What a share card of a game says, without any card or action of its log:
    `{date, day_number, deal, won, score, moves, par, ranked, assisted, rank, total,
    final, streak, course, time_ms, undos}` (rank, total and streak are None when the
    game is not on the day's board: practice, assisted, voided or held for review;
    `final` says the rank is the closed day's; `course` is `game_course`; `day_number`
    is the day's in the series; `time_ms` the ranked game's duration, else None;
    `undos` how many actions were taken back)."""
    daily = game.daily
    facts: dict[str, Any] = {
        "date": daily.date if daily is not None else None,
        "day_number": daily_day_number(daily.date) if daily is not None else None,
        "deal": game.deal_code,
        "won": game.won,
        "score": game.score,
        "moves": game.moves,
        "par": daily.par if daily is not None else None,
        "ranked": game.ranked,
        "assisted": game.ranked and game.assisted,
        "rank": None,
        "total": None,
        "final": False,
        "streak": None,
        "course": game_course(game=game),
        "time_ms": game.duration_ms if game.ranked else None,
        "undos": game.log.split().count(UNDO_TOKEN),
    }
    off_board = game.assisted or game.is_voided or game.review_state == ReviewState.HELD
    if daily is None or not game.ranked or off_board:
        return facts
    rows = _rows(
        f"SELECT f.rank, {_COLUMNS} {_from()} {_FINAL} "
        "WHERE e.game_id = %s AND e.date = %s AND e.board = %s",
        [game.pk, daily.date, Board.SCORE],
    )
    if rows:
        final_rank, *row = rows[0]
        rank, total, _ = _rank(daily.date, Board.SCORE, tuple(row))
        if final_rank is not None:
            closed = DayResult.objects.filter(date=daily.date).values_list("players", flat=True)
            rank, total = final_rank, closed.first() or total
        facts["rank"], facts["total"] = rank, total
        facts["final"] = final_rank is not None
        record = stats_record(PlayerStats.objects.filter(player_id=game.player_id).first())
        # The streak the game made: known while it is the player's last day counted.
        if record.last_date == daily.date:
            facts["streak"] = record.run_length
    return facts


# --- Badges ------------------------------------------------------------------------------

# Months of earned badges a player's page lists, this one included.
BADGE_MONTHS = 12


def _badge_words(code: str, goal: int) -> tuple[str, str]:
    """A badge's name and what it asks, in the reader's language."""
    if code == "every_day":
        return gettext("Every day"), ngettext(
            "A ranked game on every day of the month (%(goal)s day).",
            "A ranked game on every day of the month (%(goal)s days).",
            goal,
        ) % {"goal": goal}
    if code == "par_five":
        return gettext("Par five"), gettext("%(goal)s won games at or under par in the month.") % {
            "goal": goal
        }
    if code == "ten_wins":
        return gettext("Ten wins"), gettext("%(goal)s won days in the month.") % {"goal": goal}
    return gettext("Thirty in a row"), gettext(
        "A streak of %(goal)s won days standing in the month."
    ) % {"goal": goal}


def _counted_days(player: User, first: datetime.date, last: datetime.date) -> list[CountedDay]:
    """The player's days on the boards from `first` to `last`, in date order: their score
    board entries (one per counted day) with each day's par. Two indexed reads."""
    entries = list(
        BoardEntry.objects.filter(player=player, board=Board.SCORE, date__gte=first, date__lte=last)
        .order_by("date")
        .values_list("date", "won", "moves")
    )
    pars = dict(
        DailyDeal.objects.filter(date__in=[date for date, _, _ in entries]).values_list(
            "date", "par"
        )
    )
    return [CountedDay(date, won, moves, pars.get(date)) for date, won, moves in entries]


def _badge_dict(badge: Badge) -> dict[str, Any]:
    name, description = _badge_words(badge.code, badge.goal)
    return {
        "code": badge.code,
        "mark": BADGE_MARKS[badge.code],
        "name": name,
        "description": description,
        "goal": badge.goal,
        "progress": badge.progress,
        "earned": badge.earned,
        "earned_on": badge.earned_on.isoformat() if badge.earned_on else None,
        "earnable": badge.earnable,
    }


def player_badges(*, player: User, month: datetime.date) -> dict[str, Any]:
    """The player's badges of `month` (its first day) with their progress, and the
    badges they earned in the `BADGE_MONTHS` months up to it: `{month, badges, earned}`.

    Counted from their days on the boards (the record's games), read again each
    time: one read of at most a year and a month of entries, and their pars.
    """
    served_from = daily_deal_first_date()
    months = [month]
    while len(months) < BADGE_MONTHS:
        earlier = (months[-1] - datetime.timedelta(days=1)).replace(day=1)
        if earlier < served_from.replace(day=1):
            break
        months.append(earlier)
    days = _counted_days(player, streak_window_start(months[-1]), month_last(month))
    earned = []
    current: list[Badge] = []
    for first in months:
        badges = month_badges(days, first=first, served_from=served_from, on=today())
        if first == month:
            current = badges
        earned += [
            {"month": first.strftime("%Y-%m"), **_badge_dict(badge)}
            for badge in badges
            if badge.earned
        ]
    return {
        "month": month.strftime("%Y-%m"),
        "badges": [_badge_dict(badge) for badge in current],
        "earned": earned,
    }
