"""Benchmark of closing a day and of reading its results: a 1,000,000-game day on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/eh_bench \
        .venv/bin/python bench/close.py [--games 1000000] [--players 1000000] [--repeat 200]

It fills one day as `bench/leaderboard.py` does (the same COPY, emptied
first; `--skip-fill` keeps an earlier fill), then:

- reads the day's results while it runs (`day_results`, from the boards' counters);
- closes the day (`day_close`: every entry's final rank in batches of
  CLOSE_BATCH, then the frozen results), printing the wall time and this
  process's peak memory (tracemalloc's peak of Python allocations, and the
  growth of the resident set);
- checks the ranks (1..N on each board, in board order), closes it again and
  checks that nothing changed;
- reads the frozen results.
"""

from __future__ import annotations

import os
import resource
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/eh_bench")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "easyharp_site.settings")

from bench.leaderboard import DAY, prepare, timed  # noqa: E402

_CHECK_SQL = """
SELECT board, count(*), count(final_rank), sum(final_rank::bigint * game_id) FROM (
    SELECT board, f.rank AS final_rank, game_id,
        row_number() OVER (PARTITION BY board
            ORDER BY key1, key2, duration_ms, submitted_at, game_id) AS position
    FROM leaderboards_boardentry e JOIN leaderboards_finalrank f ON f.entry_id = e.id
    WHERE date = %s) e
WHERE final_rank = position GROUP BY board ORDER BY board
"""


def ranks_digest() -> list[tuple[object, ...]]:
    """Per board: entries whose final rank is their position, and a digest of (rank, game)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(_CHECK_SQL, [DAY])
        return list(cursor.fetchall())


def main() -> None:
    args = prepare(__doc__)
    from django.db import connection

    from leaderboards.models import DayResult, FinalRank
    from leaderboards.selectors import board_totals, day_results
    from leaderboards.services import CLOSE_BATCH, day_close

    DayResult.objects.filter(date=DAY).delete()
    FinalRank.objects.filter(entry__date=DAY).delete()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE leaderboards_boardentry")
    totals = board_totals(date=DAY)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Day {DAY}: {totals} entries; load average {load}")

    timed("results while the day runs (counters)", args.repeat, lambda: day_results(date=DAY))

    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    t = time.perf_counter()
    day_close(date=DAY)
    seconds = time.perf_counter() - t
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"  close (batches of {CLOSE_BATCH:,}): {seconds:.1f} s, Python peak "
        f"{peak / 1e6:.1f} MB, resident set grew {rss_growth / 1024:.1f} MB; load {load}",
        flush=True,
    )
    first = ranks_digest()
    for board, entries, ranked, _ in first:
        assert entries == ranked == totals[board], (board, entries, ranked, totals)
    frozen = day_results(date=DAY)
    t = time.perf_counter()
    day_close(date=DAY)
    print(f"  close again: {time.perf_counter() - t:.1f} s", flush=True)
    again = ranks_digest()
    assert again == first, (first, again)
    assert day_results(date=DAY) == frozen, "the frozen results changed"
    print("  closing twice gave the same ranks and results")
    timed("results of the closed day (frozen)", args.repeat, lambda: day_results(date=DAY))


if __name__ == "__main__":
    main()
