"""Benchmark of `check_boards` on a 1,000,000-game day, on PostgreSQL and Redis.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/eh_bench_checks \
        .venv/bin/python bench/check_boards.py [--games 1000000] [--players 1000000]

It fills one day as `bench/leaderboard.py` does (its `fill`: the games, each
player's entries and the counters, with COPY), adds each player's record
(`PlayerStats`, one INSERT ... SELECT), closes the day (`day_close`: final
ranks and results), settles its points and ranks its week and month, and
builds its board mirror in Redis, so that every copy the check compares is
there. Then it runs, each as its own `manage.py` process, whose time and
peak memory (maximum resident set) it prints:

1. `check_boards --date D` on the day in step (exit status 0);
2. the same after DRIFT entries, DRIFT records and DRIFT mirror records were
   damaged and a counter changed (exit status 1);
3. `check_boards --date D --repair` on that day;
4. `check_boards --date D` again, which must find it in step.

Redis is `REDIS_URL` (by default database 13 of the local server).
`--skip-fill` runs the checks on an earlier fill again.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/eh_bench_checks")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/13")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "easyharp_site.settings")

from bench.leaderboard import DAY, prepare  # noqa: E402

_RECORDS = """
INSERT INTO leaderboards_playerstats (player_id, played, won, last_date, run_length,
    max_streak, best_score, best_moves, moves_vs_par)
SELECT g.player_id, 1, g.won::int, d.date, g.won::int, g.won::int, g.score,
    CASE WHEN g.won THEN g.moves END, '[0, 0, 0, 0, 0, 0]'::jsonb
FROM games_game g JOIN games_dailydeal d ON d.id = g.daily_id
WHERE g.ranked
"""


def fill_copies(**_: Any) -> None:
    """The copies `fill` leaves out: records, final ranks and results, points and
    standings, and the board mirror."""
    from django.db import connection

    from leaderboards.services import board_mirror_build, day_close
    from leagues.models import Period
    from leagues.periods import period_bounds
    from leagues.services import day_points_settle, standings_rank

    # `fill` leaves its raw connection out of autocommit: start afresh.
    connection.close()

    def records() -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "TRUNCATE leaderboards_playerstats, leaderboards_finalrank, "
                "leaderboards_dayresult, leaderboards_boardcheck, leagues_daypoints, "
                "leagues_settledday, leagues_standing, leagues_standingsperiod"
            )
            cursor.execute(_RECORDS)

    def standings() -> None:
        for period in Period.values:
            standings_rank(period=period, start=period_bounds(period=period, at=DAY)[0])

    def mirror() -> None:
        redis_client().delete(_mirror_key())
        board_mirror_build(date=DAY)

    for label, step in (
        ("records", records),
        ("day closed", lambda: day_close(date=DAY)),
        ("points settled", lambda: day_points_settle(date=DAY)),
        ("week and month ranked", standings),
        ("board mirror built", mirror),
    ):
        started = time.perf_counter()
        step()
        print(f"  {label} in {time.perf_counter() - started:.1f} s", flush=True)


def redis_client() -> Any:
    import redis
    from django.conf import settings

    return redis.Redis.from_url(settings.REDIS_URL)


def _mirror_key() -> str:
    return f"eh:day-entries:{DAY.isoformat()}"


def damage(count: int) -> None:
    """Break `count` entries, records and mirror records, and one counter."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM leaderboards_boardentry WHERE date = %s AND board = 'score' "
            "AND player_id <= %s",
            [DAY, count],
        )
        cursor.execute(
            "UPDATE leaderboards_playerstats SET played = played + 1 WHERE player_id > %s "
            "AND player_id <= %s",
            [count, 2 * count],
        )
        cursor.execute(
            "UPDATE leaderboards_boardtotal SET players = players + 1 WHERE date = %s "
            "AND board = 'moves'",
            [DAY],
        )
    redis_client().hdel(_mirror_key(), *range(2 * count + 1, 3 * count + 1))


def run_check(label: str, *options: str) -> int:
    """Run check_boards in a process of its own (under GNU time, for its peak memory)."""
    command = [sys.executable, str(ROOT / "manage.py"), "check_boards", "--date", str(DAY)]
    started = time.perf_counter()
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%M", *command, *options],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=os.environ,
    )
    seconds = time.perf_counter() - started
    peak_kb = int(done.stderr.strip().splitlines()[-1])
    summary = done.stdout.strip().splitlines()[-1]
    print(
        f"{label}: {seconds:.1f} s, peak memory {peak_kb / 1024:.0f} MB, "
        f"exit status {done.returncode}\n    {summary}",
        flush=True,
    )
    return done.returncode


# Entries, records and mirror records damaged before the repair.
DRIFT = 1_000


def main() -> None:
    prepare(__doc__, fill_copies)
    assert run_check("check, in step") == 0
    damage(DRIFT)
    assert run_check(f"check, {DRIFT:,} entries, records and mirror records off") == 1
    assert run_check("check --repair", "--repair") == 1
    assert run_check("check again") == 0


if __name__ == "__main__":
    main()
