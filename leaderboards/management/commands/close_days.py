"""Close the days that are over: freeze their final ranks and results."""

from __future__ import annotations

import datetime
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from easyharp_site.dates import day_argument
from leaderboards.models import DayResult
from leaderboards.services import day_close, days_to_close


class Command(BaseCommand):
    help = (
        "Close every day whose deal has closed (a couple of minutes after midnight UTC) "
        "and that is not closed yet: store each board entry's final rank and freeze the "
        "day's player counts and distributions. Closed days are left as they are, so the "
        "command can run at any time, as often as wanted; --date closes one day again "
        "(which gives the same result)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--date",
            type=day_argument,
            default=None,
            help="Close this day (YYYY-MM-DD), even when it is closed already.",
        )

    def handle(self, *args: Any, date: datetime.date | None, **options: Any) -> None:
        if date is not None:
            if (
                date not in days_to_close(now=timezone.now())
                and not DayResult.objects.filter(date=date).exists()
            ):
                raise CommandError(f"{date.isoformat()} is not a day that is over")
            self.close(date)
            return
        days = days_to_close(now=timezone.now())
        for day in days:
            self.close(day)
        self.stdout.write(f"{len(days)} day(s) closed.")

    def close(self, date: datetime.date) -> None:
        """Close one day and say what it froze, and how long it took."""
        started = time.monotonic()
        result = day_close(date=date)
        self.stdout.write(
            f"{date.isoformat()}: {result.players} players, {result.won} won, "
            f"closed in {time.monotonic() - started:.1f} s"
        )
