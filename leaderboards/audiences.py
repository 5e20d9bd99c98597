"""Audiences: the smaller groups of players a day's board can be narrowed to.

A board narrowed to an audience (a player's friends, a league's members) shows
the same entries as the day's board, ranked among the audience only. The apps
above the leaderboards say who belongs to an audience by registering a
function here, once their app is ready; the boards, the API and the live
sockets ask for it by name without knowing where the players come from.

An audience is named by a kind and an id: `friends` of a viewer's player id,
`league` of a league's id.

An app that keeps an audience's entries in a table of its own, in board order
(the leagues do), registers it too, as `entries`: the board then reads one
index range of that table instead of one lookup per player in the day's board.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.db import connection

# An audience as SQL: a subquery that gives its players' ids, and its parameters.
AudienceSql = tuple[str, Sequence[Any]]
# An audience's own copy of its entries: a table with the columns of
# `leaderboards_boardentry` (an index on date, board and the sort key, after
# whatever the condition fixes), and the condition, with its parameters, that
# picks the audience's rows in it.
EntriesSql = tuple[str, str, Sequence[Any]]

_KINDS: dict[str, Callable[[int], AudienceSql]] = {}
_ENTRIES: dict[str, Callable[[int], EntriesSql]] = {}


def audience_register(
    *,
    kind: str,
    members: Callable[[int], AudienceSql],
    entries: Callable[[int], EntriesSql] | None = None,
) -> None:
    """Make `kind` an audience: `members(id)` gives the subquery of its player ids
    (a bounded number of them) with its parameters; `entries(id)`, when given,
    where the audience's entries are kept in board order."""
    _KINDS[kind] = members
    if entries is not None:
        _ENTRIES[kind] = entries


def audience_known(kind: str) -> bool:
    """Whether an app registered `kind`."""
    return kind in _KINDS


def audience_sql(*, kind: str, id: int) -> AudienceSql:
    """The subquery of the audience `kind` `id` (KeyError for an unregistered kind)."""
    return _KINDS[kind](id)


def audience_entries(*, kind: str, id: int) -> EntriesSql | None:
    """Where the audience `kind` `id` keeps its own entries, or None (read from the day's board)."""
    entries = _ENTRIES.get(kind)
    return entries(id) if entries is not None else None


def audience_members(*, kind: str, id: int) -> frozenset[int]:
    """The player ids of the audience `kind` `id`."""
    sql, params = audience_sql(kind=kind, id=id)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return frozenset(row[0] for row in cursor.fetchall())
