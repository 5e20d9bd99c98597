"""Attempts and submissions at the same moment, on PostgreSQL with real concurrent
transactions: one attempt per player and day, one ranked game per attempt, and no
row that every player's submission waits for."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.apps import apps as django_apps
from django.db import DatabaseError, connection
from django.utils import timezone

from games import rules
from games.models import Attempt, Game
from games.services import attempt_start
from leaderboards.models import BoardCountChange, BoardEntry, BoardTotal, PlayerStats
from leaderboards.selectors import board_totals, leaderboard_page
from leaderboards.services import board_counts_fold
from leagues.services import league_create
from races.services import race_create
from ranking import actions
from ranking.actions import game_submit
from tests.fixtures import (
    DEAL,
    WIN_LOG,
    at_human_pace,
    at_once,
    other_session,
    play_ranked,
    rewind,
)

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

real_replay = rules.replay


def slow_replay(*args: Any, **kwargs: Any) -> rules.Game:
    # Widen the window between reading the board and writing it, so that the
    # submissions really overlap.
    time.sleep(0.2)
    return real_replay(*args, **kwargs)


real_now = timezone.now


def slow_now() -> Any:
    # Between looking for the player's attempt and creating it: two requests
    # that both looked before either created would make two.
    time.sleep(0.2)
    return real_now()


def test_two_devices_starting_the_attempt_at_once_get_one_attempt(alice, daily, monkeypatch):
    monkeypatch.setattr("games.services.timezone.now", slow_now)

    results = at_once(*[lambda: attempt_start(player=alice, date=daily.date)] * 3)

    assert not [r for r in results if isinstance(r, Exception)], results
    assert sorted(created for _, created in results) == [False, False, True]
    assert {attempt.pk for attempt, _ in results} == {Attempt.objects.get().pk}


def test_two_submissions_of_one_attempt_at_once_give_one_ranked_game(alice, daily, monkeypatch):
    attempt_start(player=alice, date=daily.date)
    rewind(alice, 600)  # played at a person's pace: not held for review
    monkeypatch.setattr("games.parsing.rules.replay", slow_replay)

    results = at_once(
        lambda: game_submit(player=alice, deal=DEAL, log=WIN_LOG[:60]),
        lambda: game_submit(player=alice, deal=DEAL, log=WIN_LOG),
    )

    assert not [r for r in results if isinstance(r, Exception)], results
    (ranked,) = Game.objects.filter(ranked=True)
    assert Game.objects.filter(ranked=False).count() == 1
    assert Attempt.objects.get().game == ranked
    boards = {"score", "moves"} if ranked.won else {"score"}
    assert set(BoardEntry.objects.filter(player=alice).values_list("board", "game_id")) == {
        (board, ranked.pk) for board in boards
    }
    totals = board_totals(date=daily.date)
    assert totals == {board: 1 for board in boards}


def test_the_same_retry_at_once_stores_one_game(alice, daily, monkeypatch):
    monkeypatch.setattr("games.parsing.rules.replay", slow_replay)

    def send() -> tuple[Game, bool]:
        return game_submit(player=alice, deal=DEAL, log=WIN_LOG, idempotency_key="k1")

    results = at_once(send, send)

    assert not [r for r in results if isinstance(r, Exception)], results
    assert Game.objects.count() == 1
    assert sorted(created for _, created in results) == [False, True]
    assert {game.pk for game, _ in results} == {Game.objects.get().pk}


def test_first_players_of_the_day_at_once_are_all_counted(daily, make_player, monkeypatch):
    monkeypatch.setattr("games.parsing.rules.replay", slow_replay)
    players = [make_player(f"p{i}") for i in range(4)]
    for player in players:
        attempt_start(player=player, date=daily.date)
        rewind(player, 600)  # played at a person's pace: not held for review

    results = at_once(
        *[
            (lambda player=player: game_submit(player=player, deal=DEAL, log=WIN_LOG[:80]))
            for player in players
        ]
    )

    assert not [r for r in results if isinstance(r, Exception)], results
    page = leaderboard_page(date=daily.date, order="score")
    assert page["total"] == 4
    assert len(page["entries"]) == 4


def _tables_of(*apps: str) -> list[str]:
    return [
        model._meta.db_table
        for app in apps
        for model in django_apps.get_app_config(app).get_models()
    ]


def test_a_ranked_submission_waits_on_no_row_that_other_players_write(
    alice, bob, daily, monkeypatch
):
    """A ranked submission writes rows of its own player and game only: it goes through
    while another session holds every existing row of the boards', leagues' and
    races' tables and the day's deal, and the day's counts catch up after."""
    play_ranked(alice, WIN_LOG)
    board_counts_fold()
    league = league_create(owner=alice, name="Lunch")
    race_create(host=alice, minutes=10)
    attempt, _ = attempt_start(player=bob, date=daily.date)
    at_human_pace(attempt.pk, WIN_LOG[:80])
    locked = _tables_of("leaderboards", "leagues", "races")
    assert BoardTotal.objects.exists() and PlayerStats.objects.exists()

    with other_session() as other, other.transaction():
        for table in locked:
            other.execute(f"SELECT 1 FROM {table} FOR NO KEY UPDATE")
        other.execute("SELECT 1 FROM games_dailydeal WHERE id = %s FOR NO KEY UPDATE", [daily.pk])
        # A wait on any of those rows fails the submission instead of hanging the test.
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '5s'")
        game, created = game_submit(player=bob, deal=DEAL, log=WIN_LOG[:80])
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = 0")

        assert created and game.ranked and not game.won
        assert BoardEntry.objects.filter(player=bob, board="score").exists()
        # Counted at once: the reads add the changes not folded yet.
        assert leaderboard_page(date=daily.date, order="score")["total"] == 2
        assert BoardTotal.objects.get(date=daily.date, board="score").players == 1
        assert league.pk is not None

    assert board_counts_fold() == 1
    assert BoardTotal.objects.get(date=daily.date, board="score").players == 2
    assert not BoardCountChange.objects.exists()
    assert leaderboard_page(date=daily.date, order="score")["total"] == 2


def test_a_ranked_submission_whose_derived_write_fails_stores_nothing(alice, daily, monkeypatch):
    attempt, _ = attempt_start(player=alice, date=daily.date)
    at_human_pace(attempt.pk, WIN_LOG)

    ranked = actions.boards.game_ranked

    def broken(*, game: Game) -> None:
        ranked(game=game)
        with connection.cursor() as cursor:  # its id is taken
            cursor.execute("INSERT INTO games_game (id) VALUES (%s)", [game.pk])

    monkeypatch.setattr(actions.boards, "game_ranked", broken)

    with pytest.raises(DatabaseError):
        game_submit(player=alice, deal=DEAL, log=WIN_LOG)

    assert not Game.objects.exists()
    assert not BoardEntry.objects.exists()
    assert not PlayerStats.objects.exists()
    assert not Game.objects.filter(attempt=attempt).exists()  # open: it may be sent again
    monkeypatch.undo()
    game, created = game_submit(player=alice, deal=DEAL, log=WIN_LOG)
    assert created and game.ranked
