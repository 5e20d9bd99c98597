"""Each league's own copy of its members' board entries (`LeagueEntry`) stays in
step with the day's boards through every way a board or a membership changes: a
ranked game, a void, a ban and its lifting, a join (with the player's past
days), leaving, removal by the owner, a deleted league and a deleted account.

After every step, each league board read from the copy is the same, entry for
entry, as the day's board narrowed to the league's members (one lookup per
member, which reads the boards themselves).
"""

from __future__ import annotations

import datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from easyharp_site.accounts.deletion import player_delete
from games.models import DailyDeal
from games.services import game_void, player_ban, player_unban
from leaderboards.models import Board
from leaderboards.selectors import leaderboard_among
from leagues import services
from leagues.models import LeagueEntry
from leagues.selectors import league_entries_sql, league_members_sql
from tests.fixtures import PASSWORD, stored_game


def board(league, date: datetime.date, order: str, *, copied: bool) -> dict:
    return leaderboard_among(
        date=date,
        order=order,
        audience=league_members_sql(league.pk),
        entries=league_entries_sql(league.pk) if copied else None,
        limit=100,
    )


def assert_in_step(league, *days: DailyDeal) -> list[list[str]]:
    """The copy's boards equal the narrowed boards; the players of each (score board)."""
    shown = []
    for day in days:
        for order in Board.values:
            copy = board(league, day.date, order, copied=True)
            read = board(league, day.date, order, copied=False)
            assert copy == read, (day.date, order)
        shown.append(
            [e["player"] for e in board(league, day.date, Board.SCORE, copied=True)["entries"]]
        )
    return shown


def test_a_league_copy_follows_every_change_of_its_members_entries(
    alice, bob, make_player, daily, today
) -> None:
    carol, dave, outsider = make_player("carol"), make_player("dave"), make_player("outsider")
    yesterday = DailyDeal.objects.create(date=today - datetime.timedelta(days=1), number=5)
    league = services.league_create(owner=alice, name="Friday club")
    services.league_join(player=bob, code=league.invite_code)

    stored_game(player=outsider, daily=daily, score=999, moves=10, won=True)
    stored_game(player=alice, daily=daily, score=400, moves=90, won=True)
    bobs = stored_game(player=bob, daily=daily, score=500, moves=80)
    assert assert_in_step(league, daily) == [["bob", "alice"]]

    # Joining copies the player's past days too, and their later games follow.
    stored_game(player=carol, daily=yesterday, score=300, moves=70, won=True)
    services.league_join(player=carol, code=league.invite_code)
    stored_game(player=carol, daily=daily, score=600, moves=60, won=True)
    assert assert_in_step(league, daily, yesterday) == [["carol", "bob", "alice"], ["carol"]]

    # A void takes the game off, a ban takes every day off, lifting it brings them back.
    game_void(game=bobs, reason="test")
    assert assert_in_step(league, daily) == [["carol", "alice"]]
    player_ban(player=carol, moderator=None, reason="test")
    assert assert_in_step(league, daily, yesterday) == [["alice"], []]
    player_unban(player=carol, moderator=None, reason="test")
    assert assert_in_step(league, daily, yesterday) == [["carol", "alice"], ["carol"]]

    # Leaving, or being removed, takes every copy of the player out of that league only.
    other = services.league_create(owner=carol, name="Other club")
    services.league_join(player=dave, code=league.invite_code)
    stored_game(player=dave, daily=daily, score=100, moves=95, won=True)
    services.league_member_remove(owner=alice, slug=league.slug, username="carol")
    assert assert_in_step(league, daily, yesterday) == [["alice", "dave"], []]
    assert assert_in_step(other, daily, yesterday) == [["carol"], ["carol"]]
    services.league_leave(player=dave, slug=league.slug)
    assert assert_in_step(league, daily) == [["alice"]]

    # A deleted account leaves every league, and a deleted league keeps no copy.
    player_delete(player=carol, password=PASSWORD)
    assert not LeagueEntry.objects.filter(player=carol).exists()
    services.league_delete(owner=alice, slug=league.slug)
    assert not LeagueEntry.objects.filter(league_id=league.pk).exists()
    assert not LeagueEntry.objects.exists()


def test_a_league_board_is_read_from_the_copy_in_board_order(alice, bob, daily) -> None:
    league = services.league_create(owner=alice, name="Friday club")
    services.league_join(player=bob, code=league.invite_code)
    stored_game(player=alice, daily=daily, score=400, moves=90, won=True)
    stored_game(player=bob, daily=daily, score=400, moves=80, won=True)

    # The copy alone decides the board: a row changed in it shows.
    LeagueEntry.objects.filter(player=alice, board=Board.SCORE).update(key2=1)
    shown = board(league, daily.date, Board.SCORE, copied=True)["entries"]
    assert [e["player"] for e in shown] == ["alice", "bob"]
    shown = board(league, daily.date, Board.SCORE, copied=False)["entries"]
    assert [e["player"] for e in shown] == ["bob", "alice"]


@pytest.mark.django_db(transaction=True)
def test_the_migration_copies_the_members_entries_of_every_day() -> None:
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()
    before = [node for node in latest if node[0] != "leagues"]
    before.append(("leagues", "0002_drop_duplicate_indexes"))
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    try:
        users, deals = old.get_model("auth", "User"), old.get_model("games", "DailyDeal")
        games, entries = old.get_model("games", "Game"), old.get_model("leaderboards", "BoardEntry")
        leagues, members = (
            old.get_model("leagues", "League"),
            old.get_model("leagues", "Membership"),
        )
        alice, bob, outsider = (users.objects.create(username=n, password="!") for n in "abo")
        league = leagues.objects.create(slug="l", name="L", owner=alice, invite_code="c", members=2)
        for player in (alice, bob):
            members.objects.create(league=league, player=player)
        at = datetime.datetime(2026, 5, 1, 9, 0, tzinfo=datetime.UTC)
        for number, player in enumerate((alice, bob, outsider)):
            day = deals.objects.create(date=datetime.date(2026, 5, 1 + number), number=4 + number)
            game = games.objects.create(
                player=player, deal_number=day.number, log="S", score=100, moves=50, won=True,
                actions=50, rules_version="EH1", daily=day, created_at=at, ranked=True,
            )  # fmt: skip
            for board in ("score", "moves"):
                entries.objects.create(
                    date=day.date, board=board, player=player, game=game, key1=-100, key2=50,
                    submitted_at=at, score=100, moves=50, won=True,
                )  # fmt: skip
    finally:
        executor.loader.build_graph()
        executor.migrate(latest)

    copied = LeagueEntry.objects.order_by("date", "board")
    assert [(e.league_id, e.player.username, e.date.day, e.board) for e in copied] == [
        (league.pk, "a", 1, "moves"),
        (league.pk, "a", 1, "score"),
        (league.pk, "b", 2, "moves"),
        (league.pk, "b", 2, "score"),
    ]
