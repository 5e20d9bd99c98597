"""Build the board mirror in Redis of tomorrow, today and yesterday, where it is not complete."""

from __future__ import annotations

import datetime
import time
from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from easyharp_site.dates import day_argument, today
from leaderboards.mirror import mirror_complete, mirror_enabled
from leaderboards.services import board_mirror_build


class Command(BaseCommand):
    help = (
        "Build the day's board mirror in Redis (which friends boards read) from the "
        "boards, for tomorrow (ready before it starts), today and yesterday, unless it "
        "is complete already: after Redis lost it, or for a new day. Until a day's "
        "mirror is complete its boards read the table. Costs one request a day when "
        "there is nothing to build, so it can run as often as wanted."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--date", type=day_argument, default=None, help="Build this day (YYYY-MM-DD) only."
        )

    def handle(self, *args: Any, date: datetime.date | None, **options: Any) -> None:
        if not mirror_enabled():
            raise CommandError("the board mirror is off (BOARD_MIRROR, REDIS_URL)")
        days = [date] if date is not None else [today() + timedelta(days=n) for n in (1, 0, -1)]
        for day in days:
            started = time.monotonic()
            players = board_mirror_build(date=day)
            if players is not None:
                seconds = time.monotonic() - started
                self.stdout.write(f"{day.isoformat()}: {players} players in {seconds:.1f} s")
            elif mirror_complete(date=day):
                self.stdout.write(f"{day.isoformat()}: complete")
            else:
                raise CommandError(f"{day.isoformat()}: not built (Redis failed, or dropped it)")
