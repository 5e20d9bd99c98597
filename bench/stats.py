"""Benchmark of a player's record: the stats read of a player with 1,000 days, on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/eh_bench_stats \
        .venv/bin/python bench/stats.py [--days 1000] [--others 1000] [--repeat 500]

It empties a dedicated database (created if missing, migrated), then stores,
through the boards' writes a submission calls (`leaderboards.changes`: so the
boards and the kept record are written as in production), one ranked game a day for `--days`
days by one player (won four days in five, ~300 moves against a par of
300), and `--others` other players' ranked games on the last day. Then it
times `player_stats` (the selector behind `GET /api/players/{name}/stats/`)
and the whole API request through Django's test client, and a recompute of
the record from every game (what a void or a ban costs).
"""

from __future__ import annotations

import datetime
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/eh_bench_stats")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "easyharp_site.settings")

from bench.leaderboard import bench_parser, django_migrated, timed  # noqa: E402

FIRST = datetime.date(2024, 1, 1)


def fill(*, days: int, others: int, seed: int) -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.utils import timezone

    from games.models import DailyDeal, Game
    from leaderboards import changes

    rng = random.Random(seed)
    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE leaderboards_boardentry, leaderboards_boardtotal, leaderboards_boardbucket, "
            "leaderboards_boardcountchange, "
            "leaderboards_dayresult, leaderboards_playerstats, games_moderationaction, "
            "games_attempt, games_game, games_dailydeal, authtoken_token, auth_user "
            "RESTART IDENTITY CASCADE"
        )
    users = get_user_model().objects
    veteran = users.create_user(username="veteran", password=None)
    DailyDeal.objects.bulk_create(
        DailyDeal(date=FIRST + datetime.timedelta(days=n), number=n + 1, par=300)
        for n in range(days)
    )
    dailies = list(DailyDeal.objects.order_by("date"))

    def store(player, daily) -> None:
        won = rng.random() < 0.8
        moves = 300 + rng.randint(-10, 120)
        game = Game.objects.create(
            player=player,
            deal_number=daily.number,
            log="S",
            score=1220 if won else 5 * rng.randint(0, 200),
            moves=moves,
            won=won,
            actions=moves,
            rules_version="EH1",
            daily=daily,
            ranked=True,
            duration_ms=1000 * rng.randint(120, 3600),
            created_at=timezone.now(),
        )
        with transaction.atomic():
            changes.game_ranked(game=game)

    t = time.perf_counter()
    for daily in dailies:
        store(veteran, daily)
    for n in range(others):
        store(users.create_user(username=f"other{n}", password=None), dailies[-1])
    print(f"  {days:,} days of one player, {others:,} others in {time.perf_counter() - t:.1f} s")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def main() -> None:
    parser = bench_parser(__doc__, repeat=500)
    parser.add_argument("--days", type=int, default=1000)
    parser.add_argument("--others", type=int, default=1000)
    args = parser.parse_args()

    django_migrated()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    from leaderboards.selectors import player_stats
    from leaderboards.services import player_stats_recompute

    if not args.skip_fill:
        print(f"Filling {args.days:,} days:")
        fill(days=args.days, others=args.others, seed=args.seed)
    veteran = get_user_model().objects.get(username="veteran")
    on = FIRST + datetime.timedelta(days=args.days - 1)
    stats = player_stats(player=veteran, on=on)
    assert stats["played"] == args.days, stats
    print(
        f"  played {stats['played']}, won {stats['won']}, streak {stats['current_streak']}, "
        f"max {stats['max_streak']}, percentile {stats['percentile']}"
    )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Timings ({args.repeat} runs each, after one warm-up; load average {load}):")
    # The database's own time is read from the captured statements: start each
    # timing with an empty log (Django keeps the last 9,000).
    connection.queries_log.clear()
    timed(
        f"player_stats, {args.days:,} days",
        args.repeat,
        lambda: player_stats(player=veteran, on=on),
    )
    client = Client(HTTP_HOST="localhost")
    connection.queries_log.clear()
    timed(
        "GET /api/players/veteran/stats/ (test client)",
        args.repeat,
        lambda: client.get("/api/players/veteran/stats/"),
    )
    # Its upsert runs in a transaction, which EXPLAIN cannot replay: the wall clock only.
    runs = max(1, args.repeat // 10)
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        player_stats_recompute(player=veteran)
        samples.append((time.perf_counter() - t) * 1000)
    samples.sort()
    print(
        f"  recompute from {args.days:,} games (a void, a ban)  median "
        f"{statistics.median(samples):6.2f} ms  max {samples[-1]:6.2f} ms ({runs} runs)"
    )
    assert player_stats(player=veteran, on=on) == stats


if __name__ == "__main__":
    main()
