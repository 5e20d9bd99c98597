"""Check a day's boards against its games, and mend them with --repair."""

from __future__ import annotations

import datetime
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from easyharp_site.dates import day_argument
from leaderboards.audit import CheckResult, Drift
from ranking.audit import day_check, days_check_recent

# The exit status when a day differed from its games, mended or not: not 1,
# which a failure (a traceback) gives, so a job can tell drift from an error.
DRIFT_FOUND = 3


class Command(BaseCommand):
    help = (
        "Recompute a day's board entries, board counters, board mirror in Redis, players' "
        "records and, once the day is closed, final ranks, results, day points and "
        "standings from its games, and print every difference by kind and player. "
        "Exits with status 3 when it found any (even if it mended them), else 0 (1 is "
        "an error). With --repair it mends them, player by player under each player's lock, while "
        "submissions go on. Without --date: the last three days, today included."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--date", type=day_argument, default=None, help="Check this day (YYYY-MM-DD) only."
        )
        parser.add_argument("--repair", action="store_true", help="Mend every difference found.")

    def handle(self, *args: Any, date: datetime.date | None, repair: bool, **options: Any) -> None:
        if date is not None:
            results = [day_check(date=date, repair=repair, on_drift=self.show)]
        else:
            results = days_check_recent(repair=repair, on_drift=self.show)
        for result in results:
            self.summary(result)
        if any(not result.clean for result in results):
            sys.exit(DRIFT_FOUND)

    def show(self, drift: Drift) -> None:
        self.stdout.write(f"  {drift}")

    def summary(self, result: CheckResult) -> None:
        """One line per day: in step, or what differed by kind (and whether it was mended)."""
        day = result.date.isoformat()
        mirror = (
            ""
            if result.mirror_checked
            else " (board mirror being built or off: the records it holds checked)"
        )
        if result.clean:
            self.stdout.write(f"{day}: in step with its games{mirror}, {result.seconds:.1f} s")
            return
        kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(result.drift.items()))
        done = "mended" if result.repaired else "not mended (run with --repair)"
        self.stdout.write(
            f"{day}: {sum(result.drift.values())} difference(s), {done}: {kinds}{mirror}, "
            f"{result.seconds:.1f} s"
        )
