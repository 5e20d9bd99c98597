"""Existing data under the fair contest: each player's first game of each day becomes ranked
(games 0003) and the boards are rebuilt from the ranked games (leaderboards 0003)."""

from __future__ import annotations

import datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from games.models import Attempt, Game
from leaderboards.models import BoardBucket, BoardEntry, BoardTotal, PlayerStats
from leaderboards.selectors import leaderboard_page

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("games", "0001_initial"), ("leaderboards", "0002_boardbucket")]
# Every app's newest migration, so the tests after this one find the schema
# they expect (games 0004 makes the first game ranked, leaderboards 0004 fills
# the players' records from the ranked games).
LATEST = None
T0 = datetime.datetime(2026, 5, 1, 9, 0, tzinfo=datetime.UTC)


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    if targets is LATEST:
        targets = executor.loader.graph.leaf_nodes()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_the_first_game_of_each_player_and_day_becomes_the_ranked_one():
    old = migrate(BEFORE)
    try:
        users = old.get_model("auth", "User")
        deals = old.get_model("games", "DailyDeal")
        games = old.get_model("games", "Game")
        entries = old.get_model("leaderboards", "BoardEntry")
        alice, bob = (users.objects.create(username=name, password="!") for name in "ab")
        banned = users.objects.create(username="c", password="!", is_active=False)
        day1 = deals.objects.create(date=datetime.date(2026, 5, 1), number=4)
        day2 = deals.objects.create(date=datetime.date(2026, 5, 2), number=5)

        def game(player, day, minute, score, moves, won=False, voided=False):
            return games.objects.create(
                player=player,
                deal_number=day.number if day else 7,
                log="S",
                score=score,
                moves=moves,
                won=won,
                actions=moves,
                rules_version="EH1",
                daily=day,
                created_at=T0 + datetime.timedelta(minutes=minute),
                voided_at=T0 if voided else None,
            )

        voided = game(alice, day1, 0, 1500, 200, won=True, voided=True)
        alice_first = game(alice, day1, 1, 300, 90)
        alice_best = game(alice, day1, 2, 1300, 400, won=True)
        bob_day1 = game(bob, day1, 3, 1250, 380, won=True)
        bob_day2 = game(bob, day2, 4, 40, 10)
        bob_later = game(bob, day2, 5, 1300, 300, won=True)
        banned_game = game(banned, day1, 6, 1400, 350, won=True)
        no_day = game(alice, None, 7, 10, 3)
        # The old best-of-day entry of alice, which must go.
        entries.objects.create(
            date=day1.date,
            board="moves",
            player_id=alice.pk,
            game_id=alice_best.pk,
            key1=400,
            key2=-1300,
            submitted_at=alice_best.created_at,
            score=1300,
            moves=400,
            won=True,
        )
    finally:
        migrate(LATEST)

    ranked = set(Game.objects.filter(ranked=True).values_list("pk", flat=True))
    assert ranked == {alice_first.pk, bob_day1.pk, bob_day2.pk, banned_game.pk}
    assert not {voided.pk, alice_best.pk, bob_later.pk, no_day.pk} & ranked
    assert set(Game.objects.filter(ranked=True).values_list("duration_ms", flat=True)) == {None}
    # A closed attempt each, so no second ranked game can be started those days.
    for attempt in Attempt.objects.all():
        assert attempt.status == "closed"
        assert attempt.game.player_id == attempt.player_id
        assert attempt.started_at == attempt.closed_at == attempt.game.created_at
    assert set(Attempt.objects.values_list("game__id", flat=True)) == ranked

    def board(day, order):
        page = leaderboard_page(date=day, order=order)
        return [(entry["player"], entry["game"], entry["duration_ms"]) for entry in page["entries"]]

    assert board(day1.date, "score") == [("b", bob_day1.pk, None), ("a", alice_first.pk, None)]
    assert board(day1.date, "moves") == [("b", bob_day1.pk, None)]
    assert board(day2.date, "score") == [("b", bob_day2.pk, None)]
    assert board(day2.date, "moves") == []
    assert set(BoardTotal.objects.values_list("date", "board", "players")) == {
        (day1.date, "score", 2),
        (day1.date, "moves", 1),
        (day2.date, "score", 1),
    }
    buckets = set(BoardBucket.objects.values_list("date", "board", "key1", "players"))
    assert buckets == {
        (day1.date, "score", -1250, 1),
        (day1.date, "score", -300, 1),
        (day1.date, "moves", 380, 1),
        (day2.date, "score", -40, 1),
    }
    assert BoardEntry.objects.count() == 4
    # Each player's record, from their ranked games (the banned player has none).
    records = PlayerStats.objects.values_list("player__username", "played", "won")
    assert set(records) == {("a", 1, 0), ("b", 2, 1)}
