"""The leagues' stores of a closed day, checked with the boards (`leaderboards.audit`):
the day's points, recomputed from its games, and the standings of its week
and month, recomputed from the settled days' points.

Only a settled day is checked (one gone stale is the standings job's to settle
again), and a closed day that the job left unsettled is found; a repair
settles the day again and ranks its week and month again, each one short
set-based transaction.
"""

from __future__ import annotations

import datetime

from django.utils import timezone

from games.models import DailyDeal, ReviewState
from leaderboards.audit import COUNTED_SQL, JOB_GRACE, SCORE_KEY_SQL, Drift, Found, rows_streamed
from leaderboards.models import DURATION_UNKNOWN, DayResult
from leagues.models import DayPoints, Period, SettledDay, Standing, StandingsPeriod
from leagues.periods import period_bounds
from leagues.services import DAY_POINTS_BASE, DAY_POINTS_SPREAD, day_points_settle, standings_rank

_DAY_POINTS_DIFF = f"""
WITH expected AS (
    SELECT player_id, place AS rank,
           {DAY_POINTS_BASE} + ({DAY_POINTS_SPREAD} * (players - place + 1)) / players AS points
    FROM (
        SELECT g.player_id,
               row_number() OVER (
                   ORDER BY {SCORE_KEY_SQL}, g.moves, coalesce(g.duration_ms, {DURATION_UNKNOWN}),
                       g.created_at, g.id
               ) AS place,
               count(*) OVER () AS players
        FROM games_game g JOIN auth_user u ON u.id = g.player_id
        WHERE g.daily_id = %s AND {COUNTED_SQL}
    ) ranked
), stored AS (
    SELECT player_id, rank, points FROM leagues_daypoints WHERE date = %s
)
SELECT coalesce(x.player_id, s.player_id), s.rank, s.points, x.rank, x.points
FROM expected x FULL JOIN stored s ON s.player_id = x.player_id
WHERE (x.rank, x.points) IS DISTINCT FROM (s.rank, s.points)
ORDER BY 1
"""

_STANDINGS_DIFF = """
WITH expected AS (
    SELECT player_id,
           row_number() OVER (ORDER BY points DESC, days DESC, best DESC, player_id) AS rank,
           points, days, best
    FROM (
        SELECT player_id, SUM(points) AS points, COUNT(*) AS days, MAX(points) AS best
        FROM leagues_daypoints WHERE date >= %s AND date <= %s GROUP BY player_id
    ) sums
), stored AS (
    SELECT player_id, rank, points, days, best FROM leagues_standing
    WHERE period = %s AND start = %s
)
SELECT coalesce(x.player_id, s.player_id), s.rank, s.points, x.rank, x.points
FROM expected x FULL JOIN stored s ON s.player_id = x.player_id
WHERE (x.rank, x.points, x.days, x.best) IS DISTINCT FROM (s.rank, s.points, s.days, s.best)
ORDER BY 1
"""


def _text(rank: int | None, points: int | None) -> str:
    return "none" if rank is None else f"rank {rank}, {points} points"


def _settle(date: datetime.date) -> None:
    day_points_settle(date=date)
    for period in Period.values:
        standings_rank(period=period, start=period_bounds(period=period, at=date)[0])


def standings_check(*, date: datetime.date, repair: bool, found: Found) -> None:
    """Compare the settled day's points with its games, and its week's and month's
    standings with the settled points, and their counts; find a closed day the
    standings job left unsettled. With `repair`, settle and rank them again."""
    settled = SettledDay.objects.filter(date=date).first()
    if settled is None:
        closed = DayResult.objects.filter(date=date).values_list("closed_at", flat=True).first()
        if closed is None:
            return
        if closed < timezone.now() - JOB_GRACE:
            found(Drift("day_unsettled", None, "closed, and its points were never settled"))
        if repair:
            _settle(date)  # the standings job's own work, done now (a day just closed too)
        return
    if settled.stale:
        return  # a change since: the standings job settles it again within minutes
    # A settled count that drifted is mended as drifted points are: by settling again.
    points_count = DayPoints.objects.filter(date=date).count()
    points_off = settled.players != points_count
    if points_off:
        found(
            Drift(
                "settled_count",
                None,
                f"stored {settled.players} players, day points give {points_count}",
            )
        )
    daily_id = DailyDeal.objects.filter(date=date).values_list("id", flat=True).first()
    for player_id, rank, points, rank_given, points_given in rows_streamed(
        _DAY_POINTS_DIFF, [daily_id, ReviewState.HELD, date]
    ):
        points_off = True
        found(
            Drift(
                "day_points",
                player_id,
                f"stored {_text(rank, points)}, games give {_text(rank_given, points_given)}",
            )
        )
    if points_off and repair:
        day_points_settle(date=date)
    for period in Period.values:
        first, last = period_bounds(period=period, at=date)
        if not StandingsPeriod.objects.filter(period=period, start=first).exists():
            continue
        off = False
        for player_id, rank, points, rank_given, points_given in rows_streamed(
            _STANDINGS_DIFF, [first, last, period, first]
        ):
            off = True
            found(
                Drift(
                    "standing",
                    player_id,
                    f"{period} of {first.isoformat()}: stored {_text(rank, points)}, "
                    f"day points give {_text(rank_given, points_given)}",
                )
            )
        stored = StandingsPeriod.objects.get(period=period, start=first).players
        ranked = Standing.objects.filter(period=period, start=first).count()
        if stored != ranked:
            off = True
            found(
                Drift(
                    "standings_count",
                    None,
                    f"{period} of {first.isoformat()}: stored {stored} players, "
                    f"standings give {ranked}",
                )
            )
        if repair and (off or points_off):
            standings_rank(period=period, start=first)
