"""Settle the closed days' points and rank the weeks and months they fall in."""

from __future__ import annotations

import datetime
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from leagues.services import days_awaiting_close, standings_settle


class Command(BaseCommand):
    help = (
        "Compute the points of every closed day not settled yet (or changed since by a "
        "voided game or a ban), then rank the weeks and months those days fall in. "
        "A day over that `close_days` has not closed yet waits for a later run. "
        "Run it shortly after each UTC midnight (compose's `standings` service does)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--since",
            type=datetime.date.fromisoformat,
            default=None,
            help="First day to look at (YYYY-MM-DD); DAILY_DEAL_FIRST_DATE by default.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        first: datetime.date = options["since"] or settings.DAILY_DEAL_FIRST_DATE
        days = standings_settle(first_day=first)
        self.stdout.write(f"Settled {len(days)} day(s).")
        waiting = days_awaiting_close(first_day=first)
        if waiting:
            self.stdout.write(
                f"{len(waiting)} day(s) wait for close_days, from {waiting[0].isoformat()}."
            )
