"""Writes of friends and leagues: follow, create, join, leave, remove, renew, delete;
and the standings job, which settles closed days and ranks weeks and months.

Limits (`FOLLOWS_MAX`, `LEAGUES_PER_PLAYER_MAX`, `LEAGUE_MEMBERS_MAX`) hold
under concurrency: a player's follows and memberships are counted under the
player's row lock, a league's members under the league's row lock, always
taken in that order (player, then league), so two joins at once can neither
pass a limit nor wait on each other in a circle.

Every change to who is in an audience (a follow, a join, a leave, a removal,
a deleted league) tells the live boards, after commit, which audience changed
(`leaderboards.live.audience_changed`), so the open friends and league boards
of that audience, of any day, are read again at once. A league keeps no
entries of its own: its board is the day's board narrowed to its members
(`leaderboards.audiences`), so a join, a leave or a removal changes the board
in the same commit.
"""

from __future__ import annotations

import datetime
import secrets
from functools import partial

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext_noop
from rest_framework import status

from easyharp_site.accounts.names import invisible_char
from easyharp_site.dates import today
from easyharp_site.errors import ServiceError
from games.models import DailyDeal
from leaderboards import live
from leaderboards.models import Board, DayResult
from leagues.models import (
    DayPoints,
    Follow,
    League,
    Membership,
    Period,
    SettledDay,
    Standing,
    StandingsPeriod,
)
from leagues.periods import period_bounds

FOLLOWS_MAX = 1_000
LEAGUES_PER_PLAYER_MAX = 50
LEAGUE_MEMBERS_MAX = 1_000
LEAGUE_NAME_MAX = 60
# 24 random bytes: 192 bits, 32 URL-safe characters.
INVITE_CODE_BYTES = 24
# The points of a day (docs/RULES.md 9.5): a base for playing, the rest by percentile.
DAY_POINTS_BASE = 10
DAY_POINTS_SPREAD = 90


def _not_found() -> ServiceError:
    # The same answer for a league that does not exist and one the player is
    # not in: a non-member learns nothing of a league, not even that it exists.
    return ServiceError("not_found", gettext_noop("There is no such league."), status_code=404)


def _player_locked(player: User) -> User:
    return get_user_model().objects.select_for_update().get(pk=player.pk)


def _audience_changed(kind: str, id: int) -> None:
    """After commit, the open boards narrowed to this audience are read again."""
    transaction.on_commit(partial(live.audience_changed, kind=kind, id=id))


# --- Following ---------------------------------------------------------------------


@transaction.atomic
def follow_add(*, follower: User, followee: User) -> bool:
    """`follower` follows `followee`; False when they already did."""
    if follower.pk == followee.pk:
        raise ServiceError("cannot_follow_self", "You cannot follow yourself.")
    _player_locked(follower)
    if Follow.objects.filter(follower=follower, followee=followee).exists():
        return False
    if Follow.objects.filter(follower=follower).count() >= FOLLOWS_MAX:
        raise ServiceError(
            "too_many_follows",
            f"You follow {FOLLOWS_MAX} players already, the most one may follow.",
            status_code=status.HTTP_409_CONFLICT,
            limit=FOLLOWS_MAX,
        )
    Follow.objects.create(follower=follower, followee=followee)
    _audience_changed("friends", follower.pk)
    return True


@transaction.atomic
def follow_remove(*, follower: User, followee: User) -> bool:
    """`follower` stops following `followee`; False when they did not."""
    deleted, _ = Follow.objects.filter(follower=follower, followee=followee).delete()
    if deleted:
        _audience_changed("friends", follower.pk)
    return bool(deleted)


# --- Leagues -----------------------------------------------------------------------


def _new_invite_code() -> str:
    return secrets.token_urlsafe(INVITE_CODE_BYTES)


def invite_code_from(text: str) -> str:
    """The invite code in `text`: the code itself, or the last part of an invite link.

    >>> invite_code_from(" https://example.org/leagues/join/Abc-123_x/ ")
    'Abc-123_x'
    """
    return text.strip().rstrip("/").rsplit("/", 1)[-1]


def _league_name(name: str) -> str:
    name = " ".join(name.split())
    # A name of fillers or zero-width characters alone would show as a blank.
    if all(invisible_char(char) is not None for char in name):
        raise ServiceError("invalid_name", "A league needs a name.")
    if len(name) > LEAGUE_NAME_MAX:
        raise ServiceError(
            "invalid_name", f"A league's name has at most {LEAGUE_NAME_MAX} characters."
        )
    return name


def _membership_room(player: User) -> None:
    """Refuse when the (locked) player is in as many leagues as one may be."""
    if Membership.objects.filter(player=player).count() >= LEAGUES_PER_PLAYER_MAX:
        raise ServiceError(
            "too_many_leagues",
            f"You are in {LEAGUES_PER_PLAYER_MAX} leagues already, the most one may join.",
            status_code=status.HTTP_409_CONFLICT,
            limit=LEAGUES_PER_PLAYER_MAX,
        )


@transaction.atomic
def league_create(*, owner: User, name: str) -> League:
    """A new league with `owner` as its first member and a fresh invite code."""
    name = _league_name(name)
    _player_locked(owner)
    _membership_room(owner)
    base = slugify(name)[:40].strip("-") or "league"
    while True:
        # A random tail: slugs are unique without revealing how many leagues there are.
        slug = f"{base}-{secrets.token_hex(3)}"
        try:
            with transaction.atomic():
                league = League.objects.create(
                    slug=slug, name=name, owner=owner, invite_code=_new_invite_code(), members=1
                )
        except IntegrityError:
            continue
        break
    Membership.objects.create(league=league, player=owner)
    return league


@transaction.atomic
def league_join(*, player: User, code: str) -> League:
    """`player` joins the league whose invite code is `code` (or ends the link `code`).

    Idempotent: a member who joins again gets the league back.
    """
    code = invite_code_from(code)
    _player_locked(player)
    league = League.objects.select_for_update().filter(invite_code=code).first()
    if league is None:
        raise ServiceError(
            "invalid_code",
            "No league has that invite code (it may have been renewed).",
            status_code=status.HTTP_404_NOT_FOUND,
        )
    if Membership.objects.filter(league=league, player=player).exists():
        return league
    _membership_room(player)
    if league.members >= LEAGUE_MEMBERS_MAX:
        raise ServiceError(
            "league_full",
            f"This league has {LEAGUE_MEMBERS_MAX} members, the most a league may have.",
            status_code=status.HTTP_409_CONFLICT,
            limit=LEAGUE_MEMBERS_MAX,
        )
    Membership.objects.create(league=league, player=player)
    League.objects.filter(pk=league.pk).update(members=F("members") + 1)
    league.members += 1
    _audience_changed("league", league.pk)
    return league


def _member_league(slug: str, player: User, *, lock: bool = False) -> League:
    leagues = League.objects.select_for_update() if lock else League.objects
    league = leagues.filter(slug=slug, memberships__player=player).first()
    if league is None:
        raise _not_found()
    return league


def _owned_league(slug: str, owner: User) -> League:
    league = _member_league(slug, owner, lock=True)
    if league.owner_id != owner.pk:
        raise ServiceError(
            "not_owner",
            "Only the league's owner may do that.",
            status_code=status.HTTP_403_FORBIDDEN,
        )
    return league


def _membership_end(league: League, player_id: int) -> None:
    """End a membership; the caller holds the player's row lock."""
    deleted, _ = Membership.objects.filter(league=league, player_id=player_id).delete()
    if deleted:
        League.objects.filter(pk=league.pk).update(members=F("members") - 1)
        _audience_changed("league", league.pk)


@transaction.atomic
def league_leave(*, player: User, slug: str) -> None:
    """`player` leaves the league; its owner cannot (they delete it instead)."""
    _player_locked(player)
    league = _member_league(slug, player, lock=True)
    if league.owner_id == player.pk:
        raise ServiceError(
            "owner_cannot_leave",
            "The owner cannot leave the league; delete it instead.",
            status_code=status.HTTP_409_CONFLICT,
        )
    _membership_end(league, player.pk)


@transaction.atomic
def league_member_remove(*, owner: User, slug: str, username: str) -> None:
    """The owner removes a member (not themselves)."""
    member = get_user_model().objects.filter(username=username).exclude(pk=owner.pk).first()
    if member is not None:
        # The member's row before the league's, the order a join takes too, so
        # that two changes of memberships never wait on each other in a circle.
        _player_locked(member)
    league = _owned_league(slug, owner)
    if member is None or not Membership.objects.filter(league=league, player=member).exists():
        raise ServiceError(
            "not_a_member", "No other member has that name.", status_code=status.HTTP_404_NOT_FOUND
        )
    _membership_end(league, member.pk)


@transaction.atomic
def league_code_renew(*, owner: User, slug: str) -> League:
    """A fresh invite code; the old code and link stop working at once."""
    league = _owned_league(slug, owner)
    league.invite_code = _new_invite_code()
    league.save(update_fields=["invite_code"])
    return league


@transaction.atomic
def league_delete(*, owner: User, slug: str) -> None:
    """The owner deletes the league with its memberships."""
    league = _owned_league(slug, owner)
    _audience_changed("league", league.pk)
    league.delete()


def player_leagues_forget(*, player: User) -> None:
    """A deleted player leaves every league (owned ones are deleted) and every follow.

    Runs inside the deletion's transaction, with the player's row locked.
    """
    for league in League.objects.filter(owner=player).select_for_update():
        _audience_changed("league", league.pk)
        league.delete()
    for league in League.objects.filter(memberships__player=player).select_for_update():
        _membership_end(league, player.pk)
    # The friends boards that showed the player read them again when their
    # entries leave the boards (the accounts' deletion recomputes them).
    Follow.objects.filter(follower=player).delete()
    Follow.objects.filter(followee=player).delete()


# --- Standings --------------------------------------------------------------------

# Every entry of a day's score board with its rank and points, in one statement:
# the board's own index gives the order, the window functions the rank and count.
_DAY_POINTS_SQL = f"""
INSERT INTO leagues_daypoints (date, player_id, rank, points)
SELECT date, player_id, place,
       {DAY_POINTS_BASE} + ({DAY_POINTS_SPREAD} * (players - place + 1)) / players
FROM (
    SELECT e.date, e.player_id,
           row_number() OVER (
               ORDER BY e.key1, e.key2, e.duration_ms, e.submitted_at, e.game_id
           ) AS place,
           count(*) OVER () AS players
    FROM leaderboards_boardentry e
    WHERE e.date = %s AND e.board = %s
) ranked
"""

# One period's sums, ranked with the tie-breaks of docs/RULES.md 9.5.
_STANDINGS_SQL = """
INSERT INTO leagues_standing (period, start, player_id, rank, points, days, best)
SELECT %s, %s, player_id,
       row_number() OVER (ORDER BY points DESC, days DESC, best DESC, player_id),
       points, days, best
FROM (
    SELECT player_id, SUM(points) AS points, COUNT(*) AS days, MAX(points) AS best
    FROM leagues_daypoints
    WHERE date >= %s AND date <= %s
    GROUP BY player_id
) sums
"""


@transaction.atomic
def day_points_settle(*, date: datetime.date) -> int:
    """Compute the points of every player on the closed day `date`; returns how many."""
    if date >= today():
        raise ValueError(f"{date} has not closed yet")
    DayPoints.objects.filter(date=date).delete()
    with connection.cursor() as cursor:
        cursor.execute(_DAY_POINTS_SQL, [date, Board.SCORE])
        # A million new rows at once: fresh statistics, so that the reads that
        # follow are planned for them (autovacuum would only come later).
        cursor.execute("ANALYZE leagues_daypoints")
    players = DayPoints.objects.filter(date=date).count()
    SettledDay.objects.update_or_create(
        date=date, defaults={"players": players, "settled_at": timezone.now(), "stale": False}
    )
    return players


@transaction.atomic
def standings_rank(*, period: str, start: datetime.date) -> int:
    """Rank one week or month from the settled days' points; returns its player count."""
    first, last = period_bounds(period=period, at=start)
    Standing.objects.filter(period=period, start=first).delete()
    with connection.cursor() as cursor:
        cursor.execute(_STANDINGS_SQL, [period, first, first, last])
        cursor.execute("ANALYZE leagues_standing")
    players = Standing.objects.filter(period=period, start=first).count()
    settled = (
        SettledDay.objects.filter(date__gte=first, date__lte=last)
        .order_by("-date")
        .values_list("date", flat=True)
        .first()
    )
    StandingsPeriod.objects.update_or_create(
        period=period,
        start=first,
        defaults={
            "players": players,
            "settled_through": settled,
            "computed_at": timezone.now(),
        },
    )
    return players


def days_awaiting_close(*, first_day: datetime.date) -> list[datetime.date]:
    """The days over, from `first_day` on, whose board is not closed yet (`close_days`
    has not frozen their final ranks): their points wait for it."""
    over = today() - datetime.timedelta(days=1)
    closed = DayResult.objects.filter(date__gte=first_day, date__lte=over).values("date")
    days = DailyDeal.objects.filter(date__gte=first_day, date__lte=over).exclude(date__in=closed)
    return sorted(days.values_list("date", flat=True))


def standings_settle(*, first_day: datetime.date) -> list[datetime.date]:
    """The standings job: settle every closed day from `first_day` on that is not settled
    or went stale, then rank again the weeks and months they fall in.

    A day over whose board is not closed yet (`days_awaiting_close`) is left
    for a later run, so its points are those of its final board. Each day and
    each period is its own transaction, so the job's memory and lock time stay
    those of one day or one period however far it has to catch up. Returns
    the days it settled.
    """
    over = today() - datetime.timedelta(days=1)
    done = dict(SettledDay.objects.filter(date__gte=first_day).values_list("date", "stale"))
    waiting = set(days_awaiting_close(first_day=first_day))
    days: list[datetime.date] = []
    day = first_day
    while day <= over:
        if done.get(day, True) and day not in waiting:
            days.append(day)
        day += datetime.timedelta(days=1)
    periods = set()
    for day in days:
        day_points_settle(date=day)
        for period in Period.values:
            periods.add((period, period_bounds(period=period, at=day)[0]))
    for period, start in sorted(periods):
        standings_rank(period=period, start=start)
    return days


def settled_days_stale(*, dates: list[datetime.date]) -> None:
    """Closed days whose board changed after they were settled (a void, a ban) are
    settled again by the next run of the job."""
    SettledDay.objects.filter(date__in=dates).update(stale=True)
