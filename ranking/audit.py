"""The check of everything derived from a day's games: the boards' stores
(`leaderboards.audit.board_check`), then the leagues' (`leagues.audit`)."""

from __future__ import annotations

import datetime

from easyharp_site.dates import today
from leaderboards.audit import CheckResult, Found, board_check
from leagues.audit import standings_check

# Days the scheduled check looks back, today included: a close the worker
# missed for a few days is still caught and mended.
RECENT_DAYS = 3


def day_check(
    *, date: datetime.date, repair: bool = False, on_drift: Found | None = None
) -> CheckResult:
    """Recompute every store derived from the day's games, report each difference and,
    with `repair`, mend it: the boards' first, so that the leagues read mended boards."""
    return board_check(date=date, repair=repair, on_drift=on_drift, then=(standings_check,))


def days_check_recent(
    *, repair: bool = True, on_drift: Found | None = None, days: int = RECENT_DAYS
) -> list[CheckResult]:
    """The scheduled job's check: the last `days` days, today included, oldest first."""
    day = today()
    return [
        day_check(date=day - datetime.timedelta(days=back), repair=repair, on_drift=on_drift)
        for back in range(days - 1, -1, -1)
    ]
