"""Choose and store the deals of the coming days ahead of time, each with its par."""

from __future__ import annotations

import datetime
import time
from argparse import ArgumentTypeError
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from easyharp_site.dates import day_argument, today
from games.models import DailyDeal
from games.services import daily_deals_prepare


def _days(text: str) -> int:
    try:
        days = int(text)
    except ValueError:
        raise ArgumentTypeError(f"a number of days is a whole number, not {text!r}") from None
    if not 1 <= days <= 366:
        raise ArgumentTypeError(f"a number of days is 1 to 366, not {days}")
    return days


class Command(BaseCommand):
    help = (
        "Choose and store the deal of the day for the next 30 days (today, UTC, included) "
        "ahead of time. Each day gets the first candidate of its sequence that the solver "
        "wins with the par's fixed work (deciding within DAILY_DEAL_SOLVER_NODES positions, "
        "not cut short by the DAILY_DEAL_SOLVER_SECONDS cap), and the move count of that win "
        "as its par: the same on any machine. "
        "Days already stored are left as they are, so the command can run every day."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--days", type=_days, default=30, help="How many days to prepare (default 30)."
        )
        parser.add_argument(
            "--start",
            type=day_argument,
            default=None,
            help="The first day to prepare, YYYY-MM-DD (default: today, UTC).",
        )

    def handle(self, *args: Any, days: int, start: datetime.date | None, **options: Any) -> None:
        first = start or today()
        prepared = 0
        for offset in range(days):
            started = time.monotonic()
            ((day, new),) = daily_deals_prepare(
                first=first + datetime.timedelta(days=offset), days=1
            )
            how = f"chosen in {time.monotonic() - started:.1f} s" if new else "already stored"
            self.report(day, how)
            prepared += new
        self.stdout.write(f"{prepared} new day(s) stored, {days - prepared} already stored.")

    def report(self, day: DailyDeal, how: str) -> None:
        """One line per day: the date, the deal, its par and how it was obtained."""
        par = "no par" if day.par is None else f"par {day.par}"
        self.stdout.write(f"{day.date.isoformat()}: deal {day.number} ({par}), {how}")
