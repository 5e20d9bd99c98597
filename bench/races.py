"""Races: accepted actions a second per web process, its CPU per action, the time from
an action's send to its acknowledgement, and the race updates every player is sent.

Starts one uvicorn process as in production (bench/server.py) on a loopback
port with PostgreSQL and the Redis channel layer, makes `--races` races of
`--racers` players each (created, joined and started through the services, so
that their countdown ends as the steady play begins), and has every player
stream a legal game of their race's deal over `ws/races/<code>/` at a person's
pace (`--rate` actions a second, jittered), without waiting for the answers,
from `--client-procs` processes (the players' code is bench/stream.py's).
Each stored action sends the race's state to all its players, so the players
also count the `race` messages they receive. At the end it checks that the
database holds every acknowledged action.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/easyharp_stream \\
    REDIS_URL=redis://127.0.0.1:6379/3 \\
    .venv/bin/python bench/races.py --races 50 --racers 8 --rate 1 --duration 20

The database is created if missing and migrated; each run makes new players
and races. Everything listens and connects on loopback only.
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.fanout import (  # noqa: E402
    setup_django,
)
from bench.stream import (  # noqa: E402
    legal_logs,
    serve_and_stream,
    signed_in_cookie,
    streamed_figures,
    streaming_arguments,
)


def prepare(args: argparse.Namespace, starts_at: datetime.datetime) -> tuple[str, list[Any]]:
    """Migrate, make the races and their players: (run id, [(cookie, log, code)]), each
    race's countdown ending at `starts_at`."""
    setup_django(args.database_url, args.redis_url)
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from games.rules import Deal
    from races.models import Race
    from races.services import race_create, race_join, race_start

    call_command("migrate", verbosity=0)
    run_id = f"{time.time_ns():x}"
    users = get_user_model()
    usernames = [f"race{run_id}-{n}" for n in range(args.races * args.racers)]
    users.objects.bulk_create([users(username=name, password="!") for name in usernames])
    everyone = list(users.objects.filter(username__in=usernames).order_by("pk"))
    rng = random.Random(args.seed)
    players = []
    length = int(args.rate * args.duration * 2) + 20
    for index in range(args.races):
        seated = everyone[index * args.racers : (index + 1) * args.racers]
        race = race_create(host=seated[0], minutes=30)
        for player in seated[1:]:
            race_join(player=player, code=race.code)
        race_start(player=seated[0], code=race.code)
        # Play begins for every race as the steady part of the run does.
        Race.objects.filter(pk=race.pk).update(
            starts_at=starts_at, ends_at=starts_at + race.time_limit
        )
        logs = legal_logs(Deal(race.deal_number).code, 4, length, rng.randrange(1 << 30))
        players += [(signed_in_cookie(player), rng.choice(logs), race.code) for player in seated]
    return run_id, players


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--races", type=int, default=25)
    parser.add_argument("--racers", type=int, default=8, help="players in each race (2-8)")
    args = streaming_arguments(parser)
    if not 2 <= args.racers <= 8:
        sys.exit("--racers is 2 to 8")
    print(f"preparing {args.races} races of {args.racers} players...", flush=True)
    # The races start at the end of the ramp that follows the preparation.
    prepared_by = time.monotonic() + 30 + args.races * args.racers * 0.02
    starts_at = datetime.datetime.now(datetime.UTC) + datetime.timedelta(
        seconds=prepared_by - time.monotonic() + args.ramp
    )
    run_id, players = prepare(args, starts_at)
    if time.monotonic() > prepared_by:
        sys.exit("the preparation took longer than planned: run fewer races")

    # The players connect during the ramp after the preparation's planned end, and
    # start playing as their races do.
    time.sleep(max(0.0, prepared_by - time.monotonic()))
    results, cpu, _ = serve_and_stream(
        args,
        lambda port: [
            (cookie, log, f"ws://127.0.0.1:{port}/ws/races/{code}/")
            for cookie, log, code in players
        ],
        welcome="welcome",
        start_when_connected=False,
    )
    acked_last = {cookie: n for result in results for cookie, n in result["stored"].items()}
    from races.models import Racer

    stored = {
        cookie: len(log.split())
        for (cookie, _, _), log in zip(
            players,
            Racer.objects.filter(player__username__startswith=f"race{run_id}-")
            .order_by("player_id")
            .values_list("log", flat=True),
            strict=True,
        )
    }
    lost = sum(1 for cookie, n in acked_last.items() if stored[cookie] < n)
    received: dict[str, int] = {}
    for result in results:
        for kind, count in result["received"].items():
            received[kind] = received.get(kind, 0) + count
    print(
        json.dumps(
            {
                "races": args.races,
                "racers": args.racers,
                "rate_per_player": args.rate,
                **streamed_figures(results, cpu, args.duration),
                "race_updates_received_per_second": round(
                    received.get("race", 0) / (args.duration + args.ramp), 1
                ),
                "racers_with_an_acknowledged_action_lost": lost,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
