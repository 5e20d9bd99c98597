"""Attempts and submissions at the same moment, on PostgreSQL with real concurrent
transactions: one attempt per player and day, one ranked game per attempt. And a
ranked submission's transaction as the server runs it: outermost, committed."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.db import DatabaseError, connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from easyharp_site.statements import write
from games import derived, rules
from games.models import Attempt, Game
from games.services import attempt_start, game_submit
from leaderboards.models import BoardEntry, BoardTotal, PlayerStats
from leaderboards.selectors import leaderboard_page
from tests.fixtures import DEAL, WIN_LOG, at_human_pace, at_once, rewind

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
    totals = dict(BoardTotal.objects.filter(date=daily.date).values_list("board", "players"))
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


def test_a_ranked_submission_is_two_round_trips_to_the_database(alice, daily, driver_commands):
    attempt, _ = attempt_start(player=alice, date=daily.date)
    at_human_pace(attempt.pk, WIN_LOG)
    driver_commands.clear()

    with CaptureQueriesContext(connection) as queries:
        game, created = game_submit(player=alice, deal=DEAL, log=WIN_LOG)

    # The transaction's BEGIN, the lock and every read under it; then the game, its
    # derived stores and the COMMIT. (And between them, the board mirror's mark in Redis.)
    # (Django's log of queries notes the transaction's edges as its own entries too.)
    locking, writing = (q["sql"] for q in queries if q["sql"] not in ("BEGIN", "COMMIT"))
    assert locking.startswith("BEGIN; SELECT is_active FROM auth_user")
    assert "nextval" in locking and "FROM leaderboards_playerstats" in locking
    assert writing.startswith('INSERT INTO games_game ("id", ')
    assert writing.endswith("; COMMIT")
    assert driver_commands == []
    assert created and game.ranked and game.pk is not None
    assert Attempt.objects.get().game == game
    assert set(BoardEntry.objects.filter(game=game).values_list("board", flat=True)) == {
        "score",
        "moves",
    }
    assert PlayerStats.objects.get(player=alice).played == 1


def test_a_ranked_submission_whose_derived_write_fails_stores_nothing(alice, daily, monkeypatch):
    attempt, _ = attempt_start(player=alice, date=daily.date)
    at_human_pace(attempt.pk, WIN_LOG)

    def broken(game: Game, row: object) -> None:
        write("INSERT INTO games_game (id) VALUES (%s)", [game.pk])  # its id is taken

    failing = derived.DerivedStores(app="tests", game_stored=broken)
    monkeypatch.setattr(derived, "_REGISTERED", [*derived.registered(), failing])

    with pytest.raises(DatabaseError):
        game_submit(player=alice, deal=DEAL, log=WIN_LOG)

    assert not Game.objects.exists()
    assert not BoardEntry.objects.exists()
    assert not PlayerStats.objects.exists()
    assert not Game.objects.filter(attempt=attempt).exists()  # open: it may be sent again
    monkeypatch.undo()
    game, created = game_submit(player=alice, deal=DEAL, log=WIN_LOG)
    assert created and game.ranked
