"""A player's record: played, won, streaks (gaps, lost days, today not played yet, the
change of day at midnight UTC, voided games), the histogram of moves over par."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from games.models import DailyDeal, Game
from leaderboards import changes
from leaderboards.records import MOVES_OVER_PAR_BUCKETS, moves_over_par_bucket, record_fold
from leaderboards.selectors import player_stats
from ranking.actions import game_void, player_ban, player_unban
from tests.fixtures import client_for, stored_game

# Days and hours matter here: `.ci/run` runs these again at the turn of a day.
pytestmark = [pytest.mark.django_db, pytest.mark.clock]

DAY = datetime.date(2026, 6, 1)


def day(n: int) -> datetime.date:
    return DAY + datetime.timedelta(days=n)


def counted_game(player, n: int, *, won: bool, moves: int = 300, score: int = 104, par=300, **kw):
    """A ranked game of day `n` stored and announced as a submission announces it."""
    daily, _ = DailyDeal.objects.get_or_create(date=day(n), defaults={"number": 10 + n, "par": par})
    return stored_game(
        player=player,
        daily=daily,
        score=score if won else min(score, 50),
        moves=moves,
        won=won,
        duration_ms=60_000,
        announce=True,
        **kw,
    )


def test_a_new_player_has_an_empty_record(alice):
    stats = player_stats(player=alice, on=day(0))
    assert stats["played"] == 0
    assert stats["win_rate"] is None
    assert stats["current_streak"] == stats["max_streak"] == 0
    assert stats["best_score"] is None and stats["percentile"] is None
    assert [bucket["games"] for bucket in stats["moves_vs_par"]] == [0] * 6


def test_won_days_in_a_row_make_the_streak(alice):
    for n in range(3):
        counted_game(alice, n, won=True)
    stats = player_stats(player=alice, on=day(2))
    assert (stats["played"], stats["won"], stats["win_rate"]) == (3, 3, 1.0)
    assert stats["current_streak"] == stats["max_streak"] == 3


def test_a_gap_of_a_day_starts_the_streak_again(alice):
    counted_game(alice, 0, won=True)
    counted_game(alice, 1, won=True)
    counted_game(alice, 3, won=True)
    stats = player_stats(player=alice, on=day(3))
    assert stats["current_streak"] == 1
    assert stats["max_streak"] == 2


def test_a_lost_day_ends_the_streak(alice):
    counted_game(alice, 0, won=True)
    counted_game(alice, 1, won=True)
    counted_game(alice, 2, won=False)
    stats = player_stats(player=alice, on=day(2))
    assert stats["current_streak"] == 0
    assert stats["max_streak"] == 2
    assert (stats["played"], stats["won"]) == (3, 2)


def test_the_streak_stands_while_today_is_not_played_yet(alice):
    counted_game(alice, 0, won=True)
    counted_game(alice, 1, won=True)
    # Day 2 is today and not played yet: yesterday's streak still stands.
    assert player_stats(player=alice, on=day(2))["current_streak"] == 2


def test_the_streak_breaks_at_midnight_utc_after_a_day_missed(alice):
    counted_game(alice, 0, won=True)
    counted_game(alice, 1, won=True)
    # Day 2 ended without a game; at midnight UTC day 3 begins and the streak is gone.
    assert player_stats(player=alice, on=day(2))["current_streak"] == 2
    assert player_stats(player=alice, on=day(3))["current_streak"] == 0
    assert player_stats(player=alice, on=day(3))["max_streak"] == 2


def test_a_voided_game_leaves_the_record(alice):
    counted_game(alice, 0, won=True)
    middle = counted_game(alice, 1, won=True, moves=250)
    counted_game(alice, 2, won=True)
    game_void(game=middle, reason="test")
    stats = player_stats(player=alice, on=day(2))
    assert (stats["played"], stats["won"]) == (2, 2)
    # The voided day is a gap: the streak is the last day alone.
    assert stats["current_streak"] == 1
    assert stats["max_streak"] == 1
    assert stats["best_moves"] == 300


def test_assisted_and_practice_games_are_not_counted(alice):
    counted_game(alice, 0, won=True, assisted=True)
    daily = DailyDeal.objects.get(date=day(0))
    practice = Game.objects.create(
        player=alice, deal_number=daily.number, log="S", score=104, moves=300, won=True,
        actions=300, rules_version="EH1", daily=daily, ranked=False, created_at=timezone.now(),
    )  # fmt: skip
    changes.game_ranked(game=practice)
    assert player_stats(player=alice, on=day(0))["played"] == 0


def test_a_ban_empties_the_record_and_lifting_it_brings_it_back(alice):
    counted_game(alice, 0, won=True)
    player_ban(player=alice, moderator=None, reason="test")
    assert player_stats(player=alice, on=day(0))["played"] == 0
    player_unban(player=alice, moderator=None, reason="test")
    assert player_stats(player=alice, on=day(0))["played"] == 1


def test_a_game_of_an_earlier_day_arriving_late_is_folded_in_order(alice):
    counted_game(alice, 0, won=True)
    counted_game(alice, 2, won=True)
    counted_game(alice, 1, won=True)
    stats = player_stats(player=alice, on=day(2))
    assert stats["current_streak"] == stats["max_streak"] == 3


def test_the_histogram_counts_won_games_by_moves_over_par(alice):
    counted_game(alice, 0, won=True, moves=290)  # under par: first bucket
    counted_game(alice, 1, won=True, moves=300)  # at par: first bucket
    counted_game(alice, 2, won=True, moves=305)  # +5
    counted_game(alice, 3, won=True, moves=340)  # +40
    counted_game(alice, 4, won=True, moves=500)  # +200
    counted_game(alice, 5, won=False, moves=320)  # lost: in no bucket
    counted_game(alice, 6, won=True, moves=310, par=None)  # no par: in no bucket
    stats = player_stats(player=alice, on=day(6))
    assert [bucket["games"] for bucket in stats["moves_vs_par"]] == [2, 1, 0, 1, 0, 1]
    assert stats["moves_vs_par"][0] == {"min": None, "max": 0, "games": 2}
    assert stats["moves_vs_par"][1] == {"min": 1, "max": 10, "games": 1}
    assert stats["moves_vs_par"][-1] == {"min": 101, "max": None, "games": 1}
    assert stats["best_moves"] == 290


@pytest.mark.parametrize(
    ("over", "bucket"), [(-5, 0), (0, 0), (1, 1), (10, 1), (11, 2), (100, 4), (101, 5)]
)
def test_each_number_of_moves_over_par_has_one_bucket(over, bucket):
    assert moves_over_par_bucket(300 + over, 300) == bucket
    assert len(MOVES_OVER_PAR_BUCKETS) == 6


def test_the_kept_record_equals_a_fold_of_every_counted_day(alice):
    pattern = [True, True, False, True, True, True, False, False, True]
    for n, won in enumerate(pattern):
        if n != 4:  # a day missed
            counted_game(alice, n, won=won, moves=300 + n)
    stored = alice.stats
    folded = record_fold(
        (day(n), won, 104 if won else 50, 300 + n, 300) for n, won in enumerate(pattern) if n != 4
    )
    assert (stored.played, stored.won, stored.run_length, stored.max_streak) == (
        folded.played,
        folded.won,
        folded.run_length,
        folded.max_streak,
    )
    assert stored.moves_vs_par == folded.moves_vs_par


def test_the_api_shows_the_record_with_the_percentile_of_the_last_day(alice, bob, daily):
    from tests.fixtures import WIN_LOG, play_ranked

    play_ranked(alice, WIN_LOG)
    play_ranked(bob, "S")
    answer = client_for(None).get("/api/players/alice/stats/")
    assert answer.status_code == 200
    body = answer.json()
    assert (body["played"], body["won"], body["current_streak"]) == (1, 1, 1)
    assert body["percentile"] == 100
    assert body["percentile_date"] == daily.date.isoformat()
    assert client_for(None).get("/api/players/bob/stats/").json()["percentile"] == 0


def test_an_unknown_player_has_no_stats(anon):
    answer = anon.get("/api/players/nobody/stats/")
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "not_found"


def test_a_percentile_half_way_is_rounded_up_as_the_pages_round_it() -> None:
    from leaderboards.selectors import _percentile

    # 100 of 200 other players below: 50.5 %, shown 51 here and by daily.js.
    assert [_percentile(rank, 201) for rank in (100, 101, 102)] == [51, 50, 50]
    assert (_percentile(1, 1), _percentile(2, 2), _percentile(26, 101)) == (100, 0, 75)
