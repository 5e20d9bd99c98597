"""Choose and store the deals of today and the next days ahead of their first visitor."""

from __future__ import annotations

import datetime
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand
from django.utils import timezone

from games.models import DailyDeal
from games.services import daily_deal_store


class Command(BaseCommand):
    help = (
        "Store the deal of the day for today and the next days (run it daily, e.g. from "
        "cron), so that no visitor waits for the solver. Stored future days are still "
        "served only from their own day on."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--days", type=int, default=2, help="How many days from today (default 2)."
        )

    def handle(self, *args: Any, days: int, **options: Any) -> None:
        for date in self.dates(timezone.now().date(), days):
            day = self.open_day(date)
            self.stdout.write(f"{day.date.isoformat()}: deal {day.number} (par {day.par})")

    @staticmethod
    def dates(today: datetime.date, days: int) -> list[datetime.date]:
        """Today and the days after it, `days` in all."""
        return [today + datetime.timedelta(days=offset) for offset in range(max(days, 0))]

    @staticmethod
    def open_day(date: datetime.date) -> DailyDeal:
        """Store the deal of `date` (a stored day is left as it is)."""
        return daily_deal_store(date=date)
