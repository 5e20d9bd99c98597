"""Reads of the leaderboards, shared by the REST API, the websocket snapshot and the pages.

Every board is read through the composite index
(date, board, key1, key2, submitted_at, game_id): a page is an index range, the
neighbours of a player are two short index scans from their entry, and a rank
is a count over the shorter side of the index (entries better than the player,
or the stored total minus the entries worse), so a player near the bottom of a
board of a million costs as little as one near the top.

Results are JSON-ready: dates and times are ISO 8601 strings.
"""

from __future__ import annotations

import datetime
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import BooleanField, QuerySet
from django.db.models.expressions import RawSQL

from games.models import DailyDeal
from leaderboards.models import BoardEntry, BoardTotal

PAGE_LIMIT_MAX = 100
_SORT = ("key1", "key2", "submitted_at", "game_id")
_SORT_DESC = tuple(f"-{name}" for name in _SORT)
_ROW = "(key1, key2, submitted_at, game_id)"
_FIELDS = ("key1", "key2", "submitted_at", "game_id", "score", "moves", "won", "player__username")
# Rank counts run with growing caps on both sides until one side is exhausted.
_RANK_CAPS = (1_024, 32_768, 1_048_576)


def _iso(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z")


def _entries(date: datetime.date, board: str) -> QuerySet[BoardEntry]:
    return BoardEntry.objects.filter(date=date, board=board)


def _beyond(entry: dict[str, Any], comparison: str) -> RawSQL:
    """A filter on entries sorting before (`<`) or after (`>`) `entry`."""
    params = [entry["key1"], entry["key2"], entry["submitted_at"], entry["game_id"]]
    return RawSQL(f"{_ROW} {comparison} (%s, %s, %s, %s)", params, output_field=BooleanField())


def _entry_dict(row: dict[str, Any], rank: int) -> dict[str, Any]:
    return {
        "rank": rank,
        "player": row["player__username"],
        "score": row["score"],
        "moves": row["moves"],
        "won": row["won"],
        "game": row["game_id"],
        "submitted_at": _iso(row["submitted_at"]),
    }


def leaderboard_total(*, date: datetime.date, order: str) -> int:
    """Number of players on the board `order` of `date`."""
    total = BoardTotal.objects.filter(date=date, board=order).values_list("players", flat=True)
    return total.first() or 0


def _deal_code(date: datetime.date) -> str | None:
    number = DailyDeal.objects.filter(date=date).values_list("number", flat=True).first()
    if number is None:
        return None
    from games.rules import Deal

    return Deal(number).code


def _rank(date: datetime.date, order: str, row: dict[str, Any], total: int) -> int:
    entries = _entries(date, order)
    better_filter, worse_filter = _beyond(row, "<"), _beyond(row, ">")
    for cap in _RANK_CAPS:
        better = entries.filter(better_filter)[:cap].count()
        if better < cap:
            return better + 1
        worse = entries.filter(worse_filter)[:cap].count()
        if worse < cap:
            # The total is read apart from the count, so a concurrent insert can
            # shift it by one for a moment; never report a rank outside the board.
            return min(max(total - worse, 1), total)
    return entries.filter(better_filter).count() + 1


def _player_row(date: datetime.date, order: str, player: AbstractBaseUser) -> dict[str, Any] | None:
    return _entries(date, order).filter(player_id=player.pk).values(*_FIELDS).first()


def leaderboard_page(
    *, date: datetime.date, order: str, limit: int = PAGE_LIMIT_MAX, offset: int = 0
) -> dict[str, Any]:
    """One page of a day's board: `{date, deal, order, total, offset, limit, entries}`."""
    limit = max(0, min(limit, PAGE_LIMIT_MAX))
    offset = max(0, offset)
    rows = _entries(date, order).order_by(*_SORT).values(*_FIELDS)[offset : offset + limit]
    return {
        "date": date.isoformat(),
        "deal": _deal_code(date),
        "order": order,
        "total": leaderboard_total(date=date, order=order),
        "offset": offset,
        "limit": limit,
        "entries": [_entry_dict(row, offset + i + 1) for i, row in enumerate(rows)],
    }


def leaderboard_entry(
    *, date: datetime.date, order: str, player: AbstractBaseUser
) -> dict[str, Any] | None:
    """The player's own entry on the board with its rank, or None when not on it."""
    row = _player_row(date, order, player)
    if row is None:
        return None
    return _entry_dict(row, _rank(date, order, row, leaderboard_total(date=date, order=order)))


def leaderboard_around(
    *, date: datetime.date, order: str, player: AbstractBaseUser, limit: int = PAGE_LIMIT_MAX
) -> dict[str, Any] | None:
    """A page of up to `limit` entries centred on the player, or None when not on the board.

    Same shape as `leaderboard_page`, plus `me`, the player's own entry. Near
    either end of the board the page shifts so that it stays full.
    """
    limit = max(1, min(limit, PAGE_LIMIT_MAX))
    row = _player_row(date, order, player)
    if row is None:
        return None
    total = leaderboard_total(date=date, order=order)
    rank = _rank(date, order, row, total)
    entries = _entries(date, order)
    # Fetch up to a full page on each side, then cut the window around the player.
    before = list(
        entries.filter(_beyond(row, "<")).order_by(*_SORT_DESC).values(*_FIELDS)[: limit - 1]
    )
    after = list(entries.filter(_beyond(row, ">")).order_by(*_SORT).values(*_FIELDS)[: limit - 1])
    want_before = (limit - 1) // 2
    take_before = min(len(before), max(want_before, limit - 1 - len(after)))
    take_after = min(len(after), limit - 1 - take_before)
    before = before[:take_before][::-1]
    window = [*before, row, *after[:take_after]]
    first_rank = rank - len(before)
    me = _entry_dict(row, rank)
    return {
        "date": date.isoformat(),
        "deal": _deal_code(date),
        "order": order,
        "total": total,
        "offset": first_rank - 1,
        "limit": limit,
        "entries": [_entry_dict(r, first_rank + i) for i, r in enumerate(window)],
        "me": me,
    }


def player_board_results(*, player: AbstractBaseUser, limit: int = 30) -> list[dict[str, Any]]:
    """The player's results of their last `limit` days: per day, their entry on each board."""
    rows = list(
        BoardEntry.objects.filter(player_id=player.pk)
        .order_by("-date")
        .values("date", "board", *_FIELDS)[: limit * 2]
    )
    days: dict[datetime.date, dict[str, Any]] = {}
    for row in rows:
        day = days.setdefault(
            row["date"], {"date": row["date"].isoformat(), "score": None, "moves": None}
        )
        total = leaderboard_total(date=row["date"], order=row["board"])
        day[row["board"]] = _entry_dict(row, _rank(row["date"], row["board"], row, total))
    numbers = dict(DailyDeal.objects.filter(date__in=list(days)).values_list("date", "number"))
    from games.rules import Deal

    results = []
    for date, day in list(days.items())[:limit]:
        day["deal"] = Deal(numbers[date]).code if date in numbers else None
        results.append(day)
    return results
