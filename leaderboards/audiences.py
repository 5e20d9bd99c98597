"""Audiences: the smaller groups of players a day's board can be narrowed to.

A board narrowed to an audience (a player's friends, a league's members) shows
the same entries as the day's board, ranked among the audience only. Who
belongs to one is known to the apps above the leaderboards: they hand an
`Audience` to what they call (a league's socket, the friends page), and the
site's wiring hands the boards' own routes the friends and circle audiences
(`easyharp_site/urls.py`, `easyharp_site/asgi.py`). The boards never look one
up by name.

An audience is named by a kind and an id: `friends` of a viewer's player id,
`league` of a league's id, `circle` of a viewer's player id (the players they
follow and their leagues' members: who is playing now). Every audience's board
is read the same way: the day's entries of its players, from the board mirror
in Redis when the day's is complete, else one lookup per player in the day's
board (`leaderboards.selectors.leaderboard_among`). No app keeps a copy of its
audience's entries, so a change of who belongs shows at once.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Collection, Sequence
from typing import Any, NamedTuple

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models.expressions import RawSQL

from games.models import Attempt, Game

# An audience as SQL: a subquery that gives its players' ids, and its parameters.
AudienceSql = tuple[str, Sequence[Any]]
# An audience kind's members: from its id, the subquery of its player ids (a
# bounded number of them).
Members = Callable[[int], AudienceSql]


class Audience(NamedTuple):
    """One audience: its `kind` and `id` (how a change of its members is announced,
    `leaderboards.live.audience_changed`) and the read of its `members`."""

    kind: str
    id: int
    members: Members

    @property
    def sql(self) -> AudienceSql:
        """The subquery of its player ids."""
        return self.members(self.id)

    def player_ids(self) -> frozenset[int]:
        """Its player ids, read now."""
        sql, params = self.sql
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return frozenset(row[0] for row in cursor.fetchall())


def audience_off_board(
    *, date: datetime.date, audience: AudienceSql, exclude: Collection[int] = ()
) -> dict[str, Any]:
    """Who of an audience is on none of the day's boards, and why: `assisted`, whose
    ranked game of the day used a hint (`player`, `score`, `moves`, `won`,
    `duration_ms`), and
    `not_played`, the names of those without a ranked game of the day yet. Both in
    name order; banned and deleted players and `exclude` (player ids) are left out.

    A voided game is in neither list, nor a game held for review that used no
    hint: its player has played, and why it is off the boards is for the
    moderators and the player to know.
    """
    sql, params = audience
    players = dict(
        get_user_model()
        .objects.filter(pk__in=RawSQL(sql, params), is_active=True)
        .exclude(pk__in=exclude)
        .values_list("pk", "username")
    )
    ranked = {
        game["player_id"]: game
        for game in Game.objects.filter(
            player_id__in=players, ranked=True, daily__date=date
        ).values("player_id", "assisted", "voided_at", "score", "moves", "won", "duration_ms")
    }
    assisted = [
        {
            "player": players[pk],
            **{field: game[field] for field in ("score", "moves", "won", "duration_ms")},
        }
        for pk, game in ranked.items()
        if game["assisted"] and game["voided_at"] is None
    ]
    return {
        "assisted": sorted(
            assisted, key=lambda entry: (entry["player"].casefold(), entry["player"])
        ),
        "not_played": sorted(
            (name for pk, name in players.items() if pk not in ranked),
            key=lambda name: (name.casefold(), name),
        ),
    }


# The most players "playing now" lists: a page's worth, whatever the audience's size.
PLAYING_NOW_MAX = 20


def audience_playing(
    *, date: datetime.date, audience: AudienceSql, limit: int = PLAYING_NOW_MAX
) -> list[str]:
    """The names of an audience's players whose ranked attempt of `date` is open (started,
    not submitted), the latest started first, at most `limit` of them; banned and
    deleted players left out. One query, on the attempts' (player, day) index."""
    sql, params = audience
    return list(
        Attempt.objects.filter(
            daily__date=date,
            game__isnull=True,
            player_id__in=RawSQL(sql, params),
            player__is_active=True,
        )
        .order_by("-started_at", "-id")
        .values_list("player__username", flat=True)[:limit]
    )
