"""Existing games under the fair contest: each player's first game of each day is ranked.

Before, every game of the day's deal counted and a player's best stood on the
boards. Now a player has one ranked attempt per day: their first game of each
day (not voided, of the day's deal) becomes that attempt's ranked game, with a
closed attempt so that no second ranked game can be started that day. Its
duration was never measured (null). The boards are rebuilt from these games by
the leaderboards' migration that follows.
"""

from django.db import migrations
from django.db.models import OuterRef, Subquery

BATCH = 1000


def rank_first_games(apps, schema_editor):
    Game = apps.get_model("games", "Game")
    Attempt = apps.get_model("games", "Attempt")
    previous = None
    first_ids = []
    games = (
        Game.objects.filter(daily__isnull=False, voided_at__isnull=True)
        .order_by("player_id", "daily_id", "created_at", "id")
        .values_list("id", "player_id", "daily_id")
    )
    for game_id, player_id, daily_id in games.iterator(chunk_size=BATCH):
        # In (player, day, time) order: the first row of each (player, day).
        if (player_id, daily_id) != previous:
            previous = (player_id, daily_id)
            first_ids.append(game_id)
    for start in range(0, len(first_ids), BATCH):
        batch = first_ids[start : start + BATCH]
        Game.objects.filter(pk__in=batch).update(ranked=True)
        Attempt.objects.bulk_create(
            [
                Attempt(
                    player_id=game.player_id,
                    daily_id=game.daily_id,
                    started_at=game.created_at,
                    log=game.log,
                )
                for game in Game.objects.filter(pk__in=batch)
            ]
        )
    # Each ranked game closes its attempt by pointing at it.
    Game.objects.filter(ranked=True, attempt__isnull=True).update(
        attempt_id=Subquery(
            Attempt.objects.filter(
                player_id=OuterRef("player_id"), daily_id=OuterRef("daily_id")
            ).values("id")[:1]
        )
    )


class Migration(migrations.Migration):

    dependencies = [
        ("games", "0002_fair_contest"),
    ]

    operations = [
        migrations.RunPython(rank_first_games, migrations.RunPython.noop),
    ]
