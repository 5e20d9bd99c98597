"""A month's badges, folded from a player's counted days: pure Python, no database.

A day counts as it does for the record (`records.py`): the player's ranked game of
that day is on the boards. Four badges a month, each earned once in it:

- `every_day`: a counted game on every day of the month (every day served, in the
  month the service began);
- `par_five`: five won games at or under the day's par;
- `ten_wins`: ten won days;
- `streak_30`: a streak (won days in a row, `records.Record`) that stands at 30 days
  or more on a day of the month; days of the month before count towards it.

A badge that the days left in the month can no longer bring (a day of it missed for
`every_day`, too few days left for the others) is not earnable: pages say so rather
than show a bar that cannot fill.

Badges are read from the games each time (`selectors.player_badges`), never stored:
a voided game or a ban takes a badge back as it takes the day off the record.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

BADGE_CODES = ("every_day", "par_five", "ten_wins", "streak_30")
# What each badge's medal shows (a star, or its number), on any font.
BADGE_MARKS = {"every_day": "★", "par_five": "5", "ten_wins": "10", "streak_30": "30"}
PAR_GAMES = 5
WINS = 10
STREAK_DAYS = 30


class CountedDay(NamedTuple):
    """A day the player's ranked game is on the boards."""

    date: datetime.date
    won: bool
    moves: int
    par: int | None


@dataclass(frozen=True)
class Badge:
    """How far the player is towards a badge in a month, and the day it was earned."""

    code: str
    goal: int
    progress: int
    earned_on: datetime.date | None
    # False once the days left in the month cannot bring it any more.
    earnable: bool = True

    @property
    def earned(self) -> bool:
        return self.earned_on is not None


def month_last(first: datetime.date) -> datetime.date:
    """The last day of the month that starts on `first`."""
    following = (first.replace(day=28) + datetime.timedelta(days=4)).replace(day=1)
    return following - datetime.timedelta(days=1)


def streak_window_start(first: datetime.date) -> datetime.date:
    """The first day whose game can count towards the month's `streak_30`."""
    return first - datetime.timedelta(days=STREAK_DAYS - 1)


def _counter(code: str, goal: int, dates: list[datetime.date], days_left: int) -> Badge:
    """A badge earned on the day its `goal`-th day came (`dates` in order), earnable
    while `days_left` more days can still make up the count."""
    earned_on = dates[goal - 1] if len(dates) >= goal else None
    return Badge(
        code=code,
        goal=goal,
        progress=min(len(dates), goal),
        earned_on=earned_on,
        earnable=earned_on is not None or len(dates) + days_left >= goal,
    )


def month_badges(
    days: Iterable[CountedDay],
    *,
    first: datetime.date,
    served_from: datetime.date,
    on: datetime.date | None = None,
) -> list[Badge]:
    """The badges of the month starting on `first`, from the player's counted `days`
    (in date order; days outside the month and its streak window are ignored).

    `served_from` is the service's first day: in its first month, `every_day`
    asks for the days served only. `on` is today (by default, the day after the
    month: a month over): the days from it to the month's end that are not counted
    yet are the days left, which say whether a badge not earned can still be.

    >>> start = datetime.date(2026, 2, 1)
    >>> days = [CountedDay(start + datetime.timedelta(n), True, 90, 100) for n in range(28)]
    >>> [(b.code, b.progress, b.goal, b.earned) for b in month_badges(
    ...     days, first=start, served_from=datetime.date(2026, 1, 1))]
    [('every_day', 28, 28, True), ('par_five', 5, 5, True), ('ten_wins', 10, 10, True), \
('streak_30', 28, 30, False)]
    """
    last = month_last(first)
    window = streak_window_start(first)
    played: list[datetime.date] = []
    at_par: list[datetime.date] = []
    wins: list[datetime.date] = []
    run, best_run, previous = 0, 0, None
    streak_on: datetime.date | None = None
    for day in days:
        if not window <= day.date <= last:
            continue
        follows = previous is not None and day.date - previous == datetime.timedelta(days=1)
        run = (run + 1 if follows else 1) if day.won else 0
        previous = day.date
        if day.date < first:
            continue
        best_run = max(best_run, run)
        if run >= STREAK_DAYS and streak_on is None:
            streak_on = day.date
        played.append(day.date)
        if day.won:
            wins.append(day.date)
            if day.par is not None and day.moves <= day.par:
                at_par.append(day.date)
    on = last + datetime.timedelta(days=1) if on is None else on
    start = max(first, served_from, on)
    days_left = max(0, (last - start).days + 1) - (1 if played and played[-1] == on else 0)
    # A run still alive on `on` (its last day today or yesterday) goes on with the days left.
    alive = run if previous is not None and (on - previous).days <= 1 else 0
    month_days = max(1, (last - max(first, served_from)).days + 1)
    return [
        _counter("every_day", month_days, played, days_left),
        _counter("par_five", PAR_GAMES, at_par, days_left),
        _counter("ten_wins", WINS, wins, days_left),
        Badge(
            code="streak_30",
            goal=STREAK_DAYS,
            progress=min(best_run, STREAK_DAYS),
            earned_on=streak_on,
            earnable=streak_on is not None or alive + days_left >= STREAK_DAYS,
        ),
    ]
