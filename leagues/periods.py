"""Weeks and months of the standings: ISO weeks (Monday to Sunday) and calendar months."""

from __future__ import annotations

import calendar
import datetime


def period_bounds(*, period: str, at: datetime.date) -> tuple[datetime.date, datetime.date]:
    """The first and last day of the week (`week`) or month (`month`) holding `at`.

    >>> period_bounds(period="week", at=datetime.date(2026, 12, 3))
    (datetime.date(2026, 11, 30), datetime.date(2026, 12, 6))
    >>> period_bounds(period="month", at=datetime.date(2026, 2, 14))
    (datetime.date(2026, 2, 1), datetime.date(2026, 2, 28))
    """
    if period == "week":
        first = at - datetime.timedelta(days=at.weekday())
        return first, first + datetime.timedelta(days=6)
    if period == "month":
        last_day = calendar.monthrange(at.year, at.month)[1]
        return at.replace(day=1), at.replace(day=last_day)
    raise ValueError(f"unknown period {period!r}")
