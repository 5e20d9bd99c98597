"""Reads of friends, leagues and standings, shared by the API, the pages and the sockets.

A league is seen only by its members: every read of one takes the reader and
answers `not_found` (the same as for a league that does not exist) to anyone
else.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, User
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.db import connection
from django.db.models import BooleanField, Exists, Expression, OuterRef, QuerySet, Value
from django.db.models.functions import Collate, Upper
from django.utils.translation import gettext_noop

from easyharp_site.errors import ServiceError
from leaderboards.audiences import AudienceSql
from leagues.models import Follow, League, Standing, StandingsPeriod
from leagues.periods import period_bounds

STANDINGS_LIMIT_MAX = 100
# A search for players answers at most this many, in name order.
SEARCH_LIMIT = 20
# What a search may start a name with: what a username may hold (Django's own
# validator, the one sign-up applies), at most a username's length.
SEARCH_PREFIX = re.compile(UnicodeUsernameValidator.regex, UnicodeUsernameValidator.flags)
SEARCH_PREFIX_MAX = 150


def friends_sql(viewer_id: int) -> AudienceSql:
    """The friends audience as SQL: the viewer and the players they follow (at most 1,001)."""
    return (
        "SELECT %s UNION ALL SELECT followee_id FROM leagues_follow WHERE follower_id = %s",
        [viewer_id, viewer_id],
    )


def league_members_sql(league_id: int) -> AudienceSql:
    """A league's audience as SQL: its members (at most 1,000)."""
    return ("SELECT player_id FROM leagues_membership WHERE league_id = %s", [league_id])


def circle_sql(viewer_id: int) -> AudienceSql:
    """The viewer's circle as SQL: the players they follow and the members of their
    leagues (at most 1,000 follows and 50 leagues of 1,000), without the viewer."""
    return (
        "SELECT followee_id FROM leagues_follow WHERE follower_id = %s "
        "UNION SELECT other.player_id FROM leagues_membership AS mine "
        "JOIN leagues_membership AS other ON other.league_id = mine.league_id "
        "WHERE mine.player_id = %s AND other.player_id <> %s",
        [viewer_id, viewer_id, viewer_id],
    )


def follows(*, follower: User, followee: User) -> bool:
    """Whether `follower` follows `followee`."""
    return Follow.objects.filter(follower=follower, followee=followee).exists()


def followed_players(*, follower: User) -> list[str]:
    """The usernames `follower` follows, in name order."""
    return list(
        get_user_model()
        .objects.filter(followed_by__follower=follower)
        .order_by("username")
        .values_list("username", flat=True)
    )


def _name_order() -> Expression:
    """The players' names upper-cased, in byte order: on PostgreSQL the order of the
    index `auth_user_name_prefix` (leagues' migration 0005), which serves the prefix
    search and its order together, whatever the database's collation."""
    name = Upper("username")
    return Collate(name, "C") if connection.vendor == "postgresql" else name


def player_search(*, prefix: str, viewer: User | AnonymousUser) -> list[dict[str, Any]]:
    """Up to `SEARCH_LIMIT` players whose name starts with `prefix` in any case, in name
    order, with whether `viewer` follows each; never the viewer, nor a banned or deleted
    player. A prefix that no username could start with is a 400 `invalid_search`.

    On PostgreSQL the search is one range of the index on the upper-cased names of
    active players, read in its order up to the limit.
    """
    if len(prefix) > SEARCH_PREFIX_MAX or not SEARCH_PREFIX.match(prefix):
        raise ServiceError(
            "invalid_search",
            gettext_noop(
                "Search with the beginning of a name: 1 to 150 letters, digits or _ . @ + -."
            ),
        )
    # Names are stored in NFKC (sign-up normalises them): so is the search.
    prefix = get_user_model().normalize_username(prefix)
    players = get_user_model().objects.filter(is_active=True, username__istartswith=prefix)
    if viewer.is_authenticated:
        players = players.exclude(pk=viewer.pk).annotate(
            following=Exists(Follow.objects.filter(follower=viewer.pk, followee=OuterRef("pk")))
        )
    else:
        players = players.annotate(following=Value(False, output_field=BooleanField()))
    rows = players.order_by(_name_order(), "username").values_list("username", "following")
    return [
        {"username": username, "following": following}
        for username, following in rows[:SEARCH_LIMIT]
    ]


def league_get(*, slug: str, viewer: User) -> League:
    """The league `slug` if `viewer` is one of its members, else a 404 `not_found`."""
    if not viewer.is_authenticated:
        raise ServiceError("not_found", gettext_noop("There is no such league."), status_code=404)
    league = (
        League.objects.filter(slug=slug, memberships__player=viewer).select_related("owner").first()
    )
    if league is None:
        raise ServiceError("not_found", gettext_noop("There is no such league."), status_code=404)
    return league


def league_by_code(*, code: str) -> League | None:
    """The league with this invite code, or None (the invite page's preview)."""
    return League.objects.filter(invite_code=code).first()


def player_leagues(*, player: User) -> QuerySet[League]:
    """The leagues `player` is in, by name."""
    return (
        League.objects.filter(memberships__player=player)
        .select_related("owner")
        .order_by("name", "slug")
    )


def league_members(*, league: League) -> list[str]:
    """The members' usernames, in name order."""
    return list(
        get_user_model()
        .objects.filter(memberships__league=league)
        .order_by("username")
        .values_list("username", flat=True)
    )


def league_dict(league: League, *, viewer: User) -> dict[str, Any]:
    """A league as the API shows it to a member."""
    return {
        "slug": league.slug,
        "name": league.name,
        "owner": league.owner.get_username(),
        "members": league.members,
        "invite_code": league.invite_code,
        "is_owner": league.owner_id == viewer.pk,
        "created_at": league.created_at,
    }


def _standing_dict(row: Standing, rank: int) -> dict[str, Any]:
    return {
        "rank": rank,
        "player": row.player.get_username(),
        "points": row.points,
        "days": row.days,
        "best": row.best,
    }


def _frame(period: str, at: datetime.date) -> tuple[dict[str, Any], StandingsPeriod | None]:
    first, last = period_bounds(period=period, at=at)
    computed = StandingsPeriod.objects.filter(period=period, start=first).first()
    return {
        "period": period,
        "start": first.isoformat(),
        "end": last.isoformat(),
        "settled_through": (
            computed.settled_through.isoformat() if computed and computed.settled_through else None
        ),
    }, computed


def standings_page(
    *,
    period: str,
    at: datetime.date,
    limit: int = STANDINGS_LIMIT_MAX,
    offset: int = 0,
    viewer: User | AnonymousUser | None = None,
) -> dict[str, Any]:
    """One page of the global standings of the week or month holding `at` (an index
    range on (period, start, rank)), and the viewer's own place in `me`."""
    limit = max(0, min(limit, STANDINGS_LIMIT_MAX))
    frame, computed = _frame(period, at)
    start = frame["start"]
    rows = (
        Standing.objects.filter(
            period=period, start=start, rank__gt=offset, rank__lte=offset + limit
        )
        .select_related("player")
        .order_by("rank")
    )
    page = {
        **frame,
        "total": computed.players if computed else 0,
        "offset": offset,
        "limit": limit,
        "entries": [_standing_dict(row, row.rank) for row in rows],
    }
    if viewer is not None and viewer.is_authenticated:
        mine = (
            Standing.objects.filter(period=period, start=start, player=viewer)
            .select_related("player")
            .first()
        )
        page["me"] = _standing_dict(mine, mine.rank) if mine else None
    return page


def league_standings(
    *, league: League, period: str, at: datetime.date, viewer: User
) -> dict[str, Any]:
    """The league members' standings of the week or month holding `at`, ranked among
    them in the global standings' order (at most 1,000 rows, one index lookup
    each on (period, start, player), read as plain rows)."""
    frame, _ = _frame(period, at)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT u.username, s.points, s.days, s.best FROM leagues_standing s "
            f"JOIN {get_user_model()._meta.db_table} u ON u.id = s.player_id "
            f"WHERE s.player_id IN "
            f"(SELECT player_id FROM leagues_membership WHERE league_id = %s) "
            f"AND s.period = %s AND s.start = %s ORDER BY s.rank",
            [league.pk, period, frame["start"]],
        )
        rows = cursor.fetchall()
    entries = [
        {"rank": rank, "player": player, "points": points, "days": days, "best": best}
        for rank, (player, points, days, best) in enumerate(rows, start=1)
    ]
    me = next((e for e in entries if e["player"] == viewer.get_username()), None)
    return {**frame, "total": len(entries), "entries": entries, "me": me}
