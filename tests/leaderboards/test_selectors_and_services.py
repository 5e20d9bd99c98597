"""Ranks from either side of the index, entry upkeep, and the live hook after commit."""

from __future__ import annotations

import random
from unittest import mock

import pytest

from games.models import Game
from leaderboards import selectors
from leaderboards.selectors import (
    board_buckets,
    board_totals,
    leaderboard_around,
    leaderboard_entry,
    leaderboard_page,
)
from tests.fixtures import WIN_LOG, client_for, stored_game, submit, submit_ranked

pytestmark = pytest.mark.django_db


@pytest.fixture
def crowded(daily, make_player):
    """40 players with random scores, moves and durations (many ties), half of them winners."""
    rng = random.Random(7)
    players = []
    for i in range(40):
        player = make_player(f"p{i:02}")
        won = rng.random() < 0.5
        stored_game(
            player=player,
            daily=daily,
            score=rng.choice([50, 60, 70]),
            moves=rng.choice([5, 6]),
            won=won,
            # Ties on score and moves broken by the duration, or not (None: not measured).
            duration_ms=rng.choice([None, 1_000, 2_000, 2_000]),
        )
        players.append(player)
    return players


@pytest.mark.parametrize("order", ["score", "moves"])
@pytest.mark.parametrize("caps", [(1_024,), (2, 4), (1,)])
def test_every_rank_matches_the_position_on_the_full_board(crowded, daily, order, caps):
    full = leaderboard_page(date=daily.date, order=order, limit=100)["entries"]
    expected = {entry["player"]: entry["rank"] for entry in full}

    # Small caps force the count from the bottom side (total minus worse).
    with mock.patch.object(selectors, "_RANK_CAPS", caps):
        ranks = {}
        for player in crowded:
            entry = leaderboard_entry(date=daily.date, order=order, player=player)
            if entry is not None:
                ranks[player.username] = entry["rank"]

    assert ranks == expected
    assert sorted(ranks.values()) == list(range(1, len(ranks) + 1))


@pytest.mark.parametrize("order", ["score", "moves"])
def test_many_players_entries_at_once_match_the_full_board(crowded, daily, make_player, order):
    full = leaderboard_page(date=daily.date, order=order, limit=100)["entries"]
    assert len(full) > 10  # the moves board holds the winners only
    outsider = make_player("not-on-the-board")
    ids = [player.pk for player in crowded] + [outsider.pk]

    # Small chunks: several statements for the players and for their buckets.
    with mock.patch.object(selectors, "_CHUNK", 2):
        found = selectors.leaderboard_entries_of(date=daily.date, order=order, player_ids=ids)

    assert outsider.pk not in found
    by_name = {entry["player"]: entry for entry in found.values()}
    assert [by_name[entry["player"]] for entry in full] == full
    one_by_one = {
        player.pk: leaderboard_entry(date=daily.date, order=order, player=player)
        for player in crowded
    }
    assert found == {pk: entry for pk, entry in one_by_one.items() if entry is not None}
    assert selectors.leaderboard_entries_of(date=daily.date, order=order, player_ids=[]) == {}


def test_around_matches_a_slice_of_the_full_board(crowded, daily):
    full = leaderboard_page(date=daily.date, order="score", limit=100)["entries"]

    for player in crowded[::7]:
        around = leaderboard_around(date=daily.date, order="score", player=player, limit=5)
        me = around["me"]["rank"]
        start = min(max(me - 3, 0), len(full) - 5)
        assert around["entries"] == full[start : start + 5]


def test_totals_count_players_not_games(alice, bob, daily):
    stored_game(player=alice, daily=daily, score=10, moves=5)
    for _ in range(2):
        stored_game(player=alice, daily=daily, score=30, moves=5, won=True, ranked=False)
    stored_game(player=bob, daily=daily, score=20, moves=5, won=True)

    totals = board_totals(date=daily.date)

    assert totals == {"score": 2, "moves": 1}


def test_the_live_hook_hears_only_boards_that_moved(
    alice, bob, daily, django_capture_on_commit_callbacks
):
    calls = []
    with mock.patch(
        "leaderboards.changes.live.board_changed", side_effect=lambda **kw: calls.append(kw)
    ):
        for client, log, ranked in (
            (client_for(alice), WIN_LOG[:40], True),
            (client_for(alice), WIN_LOG, False),
            (client_for(bob), WIN_LOG, True),
        ):
            with django_capture_on_commit_callbacks(execute=True):
                (submit_ranked if ranked else submit)(client, log)

    assert calls == [
        # ranked, unfinished: score board only
        {"date": daily.date, "orders": ("score",), "players": (alice.pk,)},
        # alice's practice win after her attempt moved nothing
        # bob's ranked win moved both
        {"date": daily.date, "orders": ("score", "moves"), "players": (bob.pk,)},
    ]


def test_a_game_of_another_deal_tells_the_live_hook_nothing(
    alice, daily, django_capture_on_commit_callbacks
):
    with (
        mock.patch("leaderboards.changes.live.board_changed") as changed,
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = submit(client_for(alice), "S", deal="EH1-N-AAAAAAB")

    assert response.status_code == 201
    changed.assert_not_called()


def test_the_stored_counters_always_match_the_entries(daily, make_player, admin_user):
    """Random ranked and practice games, voids, bans and lifted bans over two days."""
    import datetime
    from collections import Counter

    from games.models import DailyDeal
    from leaderboards.models import BoardEntry
    from ranking.actions import game_void, player_ban, player_unban

    rng = random.Random(3)
    days = [daily, DailyDeal.objects.create(date=daily.date - datetime.timedelta(days=1), number=9)]
    players = [make_player(f"q{i}") for i in range(6)]
    games = []
    ranked: set[tuple[int, int]] = set()
    for _ in range(80):
        roll = rng.random()
        player = rng.choice(players)
        if roll < 0.15 and games:
            game_void(game=rng.choice(games))
        elif roll < 0.25:
            ban = rng.random() < 0.5
            (player_ban if ban else player_unban)(player=player, moderator=admin_user, reason="t")
        else:
            day = rng.choice(days)
            first = (player.pk, day.pk) not in ranked
            ranked.add((player.pk, day.pk))
            games.append(
                stored_game(
                    player=player,
                    daily=day,
                    score=rng.choice([0, 10, 20, 30]),
                    moves=rng.randint(1, 5),
                    won=rng.random() < 0.4,
                    duration_ms=rng.choice([None, 500, 900]),
                    ranked=first,
                )
            )

        entries = list(BoardEntry.objects.values_list("date", "board", "key1"))
        dates = sorted({date for date, _, _ in entries})
        buckets = {
            (date, board, key1): players
            for date in dates
            for board, key1, players in board_buckets(date=date)
        }
        totals = {
            (date, board): players
            for date in dates
            for board, players in board_totals(date=date).items()
            if players
        }
        assert buckets == dict(Counter(entries))
        assert totals == dict(Counter((date, board) for date, board, _ in entries))
        # Exactly the ranked games that count: not voided, by a player not banned.
        expected = {
            (game.daily.date, game.pk)
            for game in games
            if game.ranked
            and not Game.objects.get(pk=game.pk).is_voided
            and game.player.__class__.objects.get(pk=game.player_id).is_active
        }
        assert set(BoardEntry.objects.filter(board="score").values_list("date", "game")) == expected
