"""A win always ranks above a loss: a game stopped one card short that outscores a win at
par ranks below it on every place that shows a rank."""

from __future__ import annotations

import datetime
import re
from unittest import mock

import pytest
from django.test import Client
from django.utils import timezone

from games.models import DailyDeal
from leaderboards import selectors
from leaderboards.cards import share_lines
from leaderboards.models import Board, BoardBucket, FinalRank
from leaderboards.selectors import (
    board_buckets,
    day_results,
    game_share,
    leaderboard_entries_of,
    leaderboard_entry,
    leaderboard_page,
    player_board_results,
)
from leaderboards.services import board_counts_fold, day_close
from leagues import services as leagues
from leagues.models import DayPoints
from tests.fixtures import DEAL_NUMBER, client_for, stored_game

pytestmark = pytest.mark.django_db

# The names on the day's score board, best first: the win at par, then the game
# stopped one card short that scored more, then two lower losses.
ORDER = ["pat", "lou", "kim", "sam"]


def play_day(daily: DailyDeal, make_player) -> dict:
    """pat won at par (1,280); lou, stored earlier, sent six waste cards to a column and
    stopped one card short (1,300, not won); kim and sam lost lower."""
    players = {name: make_player(name) for name in ORDER}
    earlier = timezone.now() - datetime.timedelta(minutes=5)
    games = {
        "lou": stored_game(
            player=players["lou"], daily=daily, score=1300, moves=160, at=earlier, duration_ms=1
        ),
        "pat": stored_game(player=players["pat"], daily=daily, score=1280, moves=170, won=True),
        "kim": stored_game(player=players["kim"], daily=daily, score=900, moves=120),
        "sam": stored_game(player=players["sam"], daily=daily, score=400, moves=90),
    }
    return {"players": players, "games": games}


@pytest.fixture
def day(daily, make_player) -> dict:
    return play_day(daily, make_player)


def names(entries: list[dict]) -> list[str]:
    return [entry["player"] for entry in entries]


def board_rows(html: str) -> list[str]:
    """The players of a page's board rows, in the page's order."""
    return re.findall(r'<td class="lead" data-follow="([^"]+)">', html)


def test_the_board_api_ranks_the_win_above_the_loss_that_outscored_it(day, daily) -> None:
    url = f"/api/daily/{daily.date.isoformat()}/leaderboard/"
    page = client_for(None).get(f"{url}?order=score").json()

    assert [(e["rank"], e["player"], e["won"]) for e in page["entries"]] == [
        (1, "pat", True),
        (2, "lou", False),
        (3, "kim", False),
        (4, "sam", False),
    ]
    # The after-game panel's request: the player's own entry, centred.
    panel = client_for(day["players"]["lou"]).get(f"{url}?order=score&around=me&limit=1").json()
    assert (panel["me"]["rank"], panel["total"]) == (2, 4)


@pytest.mark.parametrize("caps", [(1_024,), (1,)])
def test_the_counted_rank_agrees_with_the_ordered_listing(day, daily, caps) -> None:
    listed = {
        e["player"]: e["rank"] for e in leaderboard_page(date=daily.date, order="score")["entries"]
    }
    players = day["players"].values()

    with mock.patch.object(selectors, "_RANK_CAPS", caps):
        counted = {
            player.username: leaderboard_entry(date=daily.date, order="score", player=player)[
                "rank"
            ]
            for player in players
        }
    many = leaderboard_entries_of(
        date=daily.date, order="score", player_ids=[player.pk for player in players]
    )

    assert counted == listed == {name: rank for rank, name in enumerate(ORDER, start=1)}
    assert {entry["player"]: entry["rank"] for entry in many.values()} == listed


def test_the_buckets_keep_a_win_and_a_loss_of_one_score_apart(daily, make_player) -> None:
    stored_game(player=make_player("a"), daily=daily, score=1250, moves=200)
    stored_game(player=make_player("b"), daily=daily, score=1250, moves=210, won=True)
    board_counts_fold()

    scores = sorted(BoardBucket.objects.filter(board="score").values_list("key1", "players"))
    assert scores == [(-1_001_250, 1), (-1250, 1)]
    assert board_buckets(date=daily.date)[-2:] == [("score", -1_001_250, 1), ("score", -1250, 1)]
    # The results count the score once: 2 players scored 1,250, 1 of them won.
    results = day_results(date=daily.date)
    assert results["score_distribution"] == [{"score": 1250, "players": 2}]
    assert (results["players"], results["won"]) == (2, 1)
    assert names(leaderboard_page(date=daily.date, order="score")["entries"]) == ["b", "a"]


def test_the_moves_board_holds_the_win_only(day, daily) -> None:
    page = leaderboard_page(date=daily.date, order="moves")

    assert [(e["rank"], e["player"]) for e in page["entries"]] == [(1, "pat")]
    assert leaderboard_entry(date=daily.date, order="moves", player=day["players"]["lou"]) is None


def test_the_board_page_and_the_home_page_rank_the_win_first(day, daily, client: Client) -> None:
    board = client.get("/leaderboard/")
    home = client.get("/")

    assert board.status_code == home.status_code == 200
    assert board_rows(board.content.decode())[:4] == ORDER
    assert board_rows(home.content.decode())[:4] == ORDER
    # The loser's own day on the home page.
    client.force_login(day["players"]["lou"])
    assert '<span id="day-rank-text">2 of 4</span>' in client.get("/").content.decode()


def test_the_share_text_gives_the_loss_second_place(day, daily) -> None:
    shared = client_for(day["players"]["lou"]).get(f"/api/games/{day['games']['lou'].pk}/share/")
    facts = game_share(game=day["games"]["lou"])

    assert shared.status_code == 200
    assert (facts["rank"], facts["total"]) == (2, 4)
    assert any("rank 2 of 4" in line for line in share_lines(facts))
    assert "rank 2 of 4" in shared.json()["text"]
    winner = game_share(game=day["games"]["pat"])
    assert any("rank 1 of 4" in line for line in share_lines(winner))


def test_the_friends_board_ranks_the_win_first(day, daily) -> None:
    lou = day["players"]["lou"]
    for name in ("pat", "sam"):
        leagues.follow_add(follower=lou, followee=day["players"][name])

    page = (
        client_for(lou)
        .get(f"/api/daily/{daily.date.isoformat()}/leaderboard/?order=score&scope=friends")
        .json()
    )

    assert [(e["rank"], e["player"]) for e in page["entries"]] == [
        (1, "pat"),
        (2, "lou"),
        (3, "sam"),
    ]
    assert page["me"]["rank"] == 2


def test_the_league_board_ranks_the_win_first(day, daily) -> None:
    lou, pat, kim = (day["players"][name] for name in ("lou", "pat", "kim"))
    league = leagues.league_create(owner=kim, name="Club")
    for member in (lou, pat):
        leagues.league_join(player=member, code=league.invite_code)

    url = f"/api/leagues/{league.slug}/daily/{daily.date.isoformat()}/leaderboard/?order=score"
    page = client_for(lou).get(url).json()

    assert [(e["rank"], e["player"]) for e in page["entries"]] == [
        (1, "pat"),
        (2, "lou"),
        (3, "kim"),
    ]
    assert page["me"]["rank"] == 2


def test_a_closed_day_keeps_the_win_first_in_final_ranks_points_and_standings(
    make_player,
) -> None:
    monday = datetime.date(2026, 11, 23)
    daily = DailyDeal.objects.create(date=monday, number=DEAL_NUMBER)
    day = play_day(daily, make_player)

    day_close(date=monday)
    leagues.standings_settle(first_day=monday)

    finals = dict(
        FinalRank.objects.filter(entry__date=monday, entry__board=Board.SCORE).values_list(
            "entry__player__username", "rank"
        )
    )
    assert finals == {name: rank for rank, name in enumerate(ORDER, start=1)}
    points = dict(DayPoints.objects.filter(date=monday).values_list("player__username", "rank"))
    assert points == finals
    lou = day["players"]["lou"]
    assert player_board_results(player=lou)[0]["score"]["rank"] == 2
    assert game_share(game=day["games"]["lou"])["rank"] == 2
    results = day_results(date=monday)
    assert (results["players"], results["won"], results["final"]) == (4, 1, True)
    standings = client_for(lou).get("/api/standings/?period=week&at=2026-11-24").json()
    assert [(e["rank"], e["player"]) for e in standings["entries"]] == [
        (rank, name) for rank, name in enumerate(ORDER, start=1)
    ]
