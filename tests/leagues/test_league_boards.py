"""A league's board is the day's board narrowed to its members, at once after every
change: a ranked game, a void, a ban and its lifting, a join (with the player's
past days), leaving, removal by the owner and a deleted account.

After every step, each league board, read the way the site reads it (from the
board mirror in Redis when the day's is complete, else from the table), is the
day's own board with everyone but the members left out.
"""

from __future__ import annotations

import datetime

import pytest

from games.models import DailyDeal
from leaderboards.models import Board
from leaderboards.selectors import leaderboard_among, leaderboard_page
from leaderboards.services import board_mirror_build
from leagues import services
from leagues.models import Membership
from leagues.selectors import league_members_sql
from ranking.actions import game_void, player_ban, player_delete, player_unban
from tests.fixtures import PASSWORD, stored_game


def assert_narrowed(league, *days: DailyDeal) -> list[list[str]]:
    """Each league board equals the day's board restricted to the league's members
    (ranks counted among them); the players of each day's score board."""
    members = set(
        Membership.objects.filter(league=league).values_list("player__username", flat=True)
    )
    shown = []
    for day in days:
        for order in Board.values:
            whole = leaderboard_page(date=day.date, order=order, limit=100)["entries"]
            expected = [
                {**entry, "rank": rank}
                for rank, entry in enumerate((e for e in whole if e["player"] in members), 1)
            ]
            board = leaderboard_among(
                date=day.date, order=order, audience=league_members_sql(league.pk), limit=100
            )
            assert board["entries"] == expected, (day.date, order)
            assert board["total"] == len(expected)
        board = leaderboard_among(
            date=day.date, order=Board.SCORE, audience=league_members_sql(league.pk), limit=100
        )
        shown.append([entry["player"] for entry in board["entries"]])
    return shown


@pytest.mark.parametrize(
    "mirrored",
    [False, pytest.param(True, marks=pytest.mark.redis)],
    ids=["from-the-table", "from-the-mirror"],
)
def test_a_league_board_follows_every_change_at_once(
    settings, alice, bob, make_player, daily, today, django_capture_on_commit_callbacks, mirrored
) -> None:
    settings.BOARD_MIRROR = mirrored
    carol, dave, outsider = make_player("carol"), make_player("dave"), make_player("outsider")
    yesterday = DailyDeal.objects.create(date=today - datetime.timedelta(days=1), number=5)

    def step(write, *args, **kwargs):
        # Each write commits as on a server (the mirror's record is stored after it).
        with django_capture_on_commit_callbacks(execute=True):
            return write(*args, **kwargs)

    if mirrored:
        assert board_mirror_build(date=daily.date) == 0
        assert board_mirror_build(date=yesterday.date) == 0
    league = step(services.league_create, owner=alice, name="Friday club")
    step(services.league_join, player=bob, code=league.invite_code)

    step(stored_game, player=outsider, daily=daily, score=999, moves=10, won=True)
    step(stored_game, player=alice, daily=daily, score=400, moves=90, won=True)
    bobs = step(stored_game, player=bob, daily=daily, score=500, moves=80, won=True)
    assert assert_narrowed(league, daily) == [["bob", "alice"]]

    # A join shows the player's past days too, and their later games.
    step(stored_game, player=carol, daily=yesterday, score=300, moves=70, won=True)
    step(services.league_join, player=carol, code=league.invite_code)
    assert assert_narrowed(league, daily, yesterday) == [["bob", "alice"], ["carol"]]
    step(stored_game, player=carol, daily=daily, score=600, moves=60, won=True)
    assert assert_narrowed(league, daily, yesterday) == [["carol", "bob", "alice"], ["carol"]]

    # A void takes the game off, a ban takes every day off, lifting it brings them back.
    step(game_void, game=bobs, reason="test")
    assert assert_narrowed(league, daily) == [["carol", "alice"]]
    step(player_ban, player=carol, moderator=None, reason="test")
    assert assert_narrowed(league, daily, yesterday) == [["alice"], []]
    step(player_unban, player=carol, moderator=None, reason="test")
    assert assert_narrowed(league, daily, yesterday) == [["carol", "alice"], ["carol"]]

    # Leaving, or being removed, takes the player off that league's boards only.
    other = step(services.league_create, owner=carol, name="Other club")
    step(services.league_join, player=dave, code=league.invite_code)
    step(stored_game, player=dave, daily=daily, score=100, moves=95, won=True)
    step(services.league_member_remove, owner=alice, slug=league.slug, username="carol")
    assert assert_narrowed(league, daily, yesterday) == [["alice", "dave"], []]
    assert assert_narrowed(other, daily, yesterday) == [["carol"], ["carol"]]
    step(services.league_leave, player=dave, slug=league.slug)
    assert assert_narrowed(league, daily) == [["alice"]]

    # A deleted account leaves every board of every league.
    step(services.league_join, player=carol, code=league.invite_code)
    assert assert_narrowed(league, daily) == [["carol", "alice"]]
    step(player_delete, player=carol, password=PASSWORD)
    assert assert_narrowed(league, daily, yesterday) == [["alice"], []]
