"""The day's board entries mirrored in Redis (`leaderboards.mirror`), which friends boards read.

Every friends board read through the mirror must equal, entry for entry, the
board read from the table, through every way a player's entries change (a
ranked game, a void, a ban and its lifting, a deleted account) and every
way the audience changes (a follow). The mirror's writes must survive the
races they can meet: a reader that read the table before a writer's commit
adds its stale record after it, and two writes of one record arrive out of
order. With Redis down the boards read the table, and the records a lost
write left behind are dropped once Redis is back.
"""

from __future__ import annotations

import datetime
import time

import pytest
import redis
from django.conf import settings as django_settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from easyharp_site.accounts.deletion import player_delete
from games.services import game_void, player_ban, player_unban
from leaderboards import mirror
from leaderboards.models import Board
from leaderboards.selectors import leaderboard_among
from leagues.selectors import friends_sql
from leagues.services import follow_add
from tests.fixtures import PASSWORD, stored_game

pytestmark = pytest.mark.redis


@pytest.fixture(autouse=True)
def _mirrored(settings):
    settings.BOARD_MIRROR = True
    mirror._untrusted.clear()
    yield
    mirror._untrusted.clear()


def friends_board(settings, viewer, date, order, *, mirrored: bool, **page) -> dict:
    settings.BOARD_MIRROR = mirrored
    try:
        return leaderboard_among(
            date=date, order=order, audience=friends_sql(viewer.pk), mine=(viewer.pk,), **page
        )
    finally:
        settings.BOARD_MIRROR = True


def assert_in_step(settings, viewer, date) -> list[str]:
    """Every shape of the viewer's friends boards is the same from the mirror as
    from the table; the players of the score board, in order."""
    pages = [{"limit": 100}, {"limit": 2, "offset": 1}, {"limit": 1, "around": viewer.pk}]
    for order in Board.values:
        for page in pages:
            from_mirror = friends_board(settings, viewer, date, order, mirrored=True, **page)
            from_table = friends_board(settings, viewer, date, order, mirrored=False, **page)
            assert from_mirror == from_table, (order, page)
    shown = friends_board(settings, viewer, date, Board.SCORE, mirrored=True, limit=100)
    return [entry["player"] for entry in shown["entries"]]


def held(date: datetime.date, *players) -> dict[int, mirror.Fields]:
    records = mirror.mirror_read(date=date, player_ids=[player.pk for player in players])
    assert records is not None
    return records


@pytest.mark.parametrize("commits", [True, False], ids=["commits", "in-one-transaction"])
def test_a_friends_board_from_the_mirror_follows_every_change(
    settings, alice, bob, make_player, daily, django_capture_on_commit_callbacks, commits
) -> None:
    """`commits`: the writes' after-commit stores run, as on a server; without them
    (all in one test transaction) the records each write removes are read again."""
    carol, dave, erin = make_player("carol"), make_player("dave"), make_player("erin")
    outsider = make_player("outsider")
    for followee in (bob, carol, dave, erin):
        follow_add(follower=alice, followee=followee)
    at = datetime.datetime(2026, 5, 1, 9, 0, tzinfo=datetime.UTC)

    def step(write, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=commits):
            return write(*args, **kwargs)

    # Nobody has played: the records say so, and the board is empty.
    assert assert_in_step(settings, alice, daily.date) == []
    assert held(daily.date, alice, bob) == {
        alice.pk: mirror.NO_ENTRY,
        bob.pk: mirror.NO_ENTRY,
    }

    step(stored_game, player=outsider, daily=daily, score=999, moves=10, won=True)
    step(stored_game, player=alice, daily=daily, score=400, moves=90, won=True, at=at)
    bobs = step(stored_game, player=bob, daily=daily, score=500, moves=80)
    # The same score and moves as alice's, later: the tie goes to the earlier game.
    step(
        stored_game,
        player=carol,
        daily=daily,
        score=400,
        moves=90,
        won=True,
        at=at + datetime.timedelta(seconds=1),
    )
    # The same moves as alice's, a lower score: after her on both boards.
    step(stored_game, player=erin, daily=daily, score=300, moves=90, won=True)
    assert assert_in_step(settings, alice, daily.date) == ["bob", "alice", "carol", "erin"]

    step(game_void, game=bobs, reason="test")
    assert assert_in_step(settings, alice, daily.date) == ["alice", "carol", "erin"]
    step(player_ban, player=carol, moderator=None, reason="test")
    assert assert_in_step(settings, alice, daily.date) == ["alice", "erin"]
    step(player_unban, player=carol, moderator=None, reason="test")
    step(stored_game, player=dave, daily=daily, score=100, moves=95, duration_ms=5_000)
    assert assert_in_step(settings, alice, daily.date) == ["alice", "carol", "erin", "dave"]

    step(follow_add, follower=alice, followee=outsider)
    shown = ["outsider", "alice", "carol", "erin", "dave"]
    assert assert_in_step(settings, alice, daily.date) == shown
    step(player_delete, player=carol, password=PASSWORD)
    assert assert_in_step(settings, alice, daily.date) == ["outsider", "alice", "erin", "dave"]

    # Every friend's record is held now, so the next read asks the table for none.
    friends = (alice, bob, dave, erin, outsider)
    assert set(held(daily.date, *friends)) == {friend.pk for friend in friends}


def test_a_friends_board_is_read_from_the_mirror_in_two_statements(
    settings, alice, bob, daily, django_capture_on_commit_callbacks
) -> None:
    follow_add(follower=alice, followee=bob)
    with django_capture_on_commit_callbacks(execute=True):
        stored_game(player=alice, daily=daily, score=400, moves=90, won=True)
        stored_game(player=bob, daily=daily, score=300, moves=80, won=True)
    assert friends_board(settings, alice, daily.date, Board.SCORE, mirrored=True)["total"] == 2

    # The mirror alone decides the board: a record changed in it shows.
    richer = mirror.DayRecord(
        mirror.ON_SCORE | mirror.ON_MOVES | mirror.WON,
        held(daily.date, bob)[bob.pk][mirror.GAME],
        score=900,
        moves=80,
        duration_ms=1_000,
        submitted_us=mirror.micros(datetime.datetime(2026, 5, 1, tzinfo=datetime.UTC)),
    )
    with django_capture_on_commit_callbacks(execute=True):
        mirror.mirror_store(date=daily.date, player_id=bob.pk, record=richer)
    with CaptureQueriesContext(connection) as queries:
        board = friends_board(settings, alice, daily.date, Board.SCORE, mirrored=True)
    assert [(e["player"], e["score"]) for e in board["entries"]] == [("bob", 900), ("alice", 400)]
    # The audience's ids, then the names of the players shown with the deal's number.
    assert len(queries) == 2


def record(score: int) -> mirror.DayRecord:
    at = datetime.datetime(2026, 5, 1, 9, 0, tzinfo=datetime.UTC)
    return mirror.DayRecord(mirror.ON_SCORE, 7, score, 50, 1_000, mirror.micros(at))


def test_a_reader_adds_only_where_no_writer_has_written(
    alice, bob, daily, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        mirror.mirror_store(date=daily.date, player_id=alice.pk, record=record(400))
    # A reader that read the table before that write's commit adds its stale record after it.
    mirror.mirror_fill(date=daily.date, records={alice.pk: record(100), bob.pk: record(200)})
    assert held(daily.date, alice, bob) == {alice.pk: record(400), bob.pk: record(200)}


def test_of_two_writes_arriving_out_of_order_the_later_one_stays(
    alice, daily, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks() as first:
        mirror.mirror_store(date=daily.date, player_id=alice.pk, record=record(100))
    with django_capture_on_commit_callbacks() as second:
        mirror.mirror_store(date=daily.date, player_id=alice.pk, record=record(200))
    for store in [*second, *first]:
        store()
    assert held(daily.date, alice) == {alice.pk: record(200)}


def test_the_hash_of_a_day_expires_days_after_the_day(
    alice, daily, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        mirror.mirror_store(date=daily.date, player_id=alice.pk, record=record(100))
    client = redis.Redis.from_url(django_settings.REDIS_URL)
    expires = client.expiretime(f"eh:day-entries:{daily.date.isoformat()}")
    day_end = datetime.datetime.combine(daily.date, datetime.time(), datetime.UTC)
    assert expires == int((day_end + datetime.timedelta(days=1 + mirror.KEEP_DAYS)).timestamp())

    # An older day's board read again keeps its records an hour, not nothing.
    old_day = daily.date - datetime.timedelta(days=30)
    before = int(time.time())
    mirror.mirror_fill(date=old_day, records={alice.pk: record(100)})
    expires = client.expiretime(f"eh:day-entries:{old_day.isoformat()}")
    assert before + mirror.KEEP_SECONDS <= expires <= int(time.time()) + mirror.KEEP_SECONDS
    assert held(old_day, alice) == {alice.pk: record(100)}


def test_with_redis_down_the_boards_read_the_table_and_drop_the_day_when_it_is_back(
    settings, alice, bob, daily, django_capture_on_commit_callbacks, caplog
) -> None:
    follow_add(follower=alice, followee=bob)
    with django_capture_on_commit_callbacks(execute=True):
        stored_game(player=alice, daily=daily, score=400, moves=90, won=True)
    friends_board(settings, alice, daily.date, Board.SCORE, mirrored=True)
    key = f"eh:day-entries:{daily.date.isoformat()}"
    client = redis.Redis.from_url(django_settings.REDIS_URL)
    assert client.exists(key)

    working = settings.REDIS_URL
    settings.REDIS_URL = "redis://127.0.0.1:9/0"  # nothing listens there
    with django_capture_on_commit_callbacks(execute=True):
        stored_game(player=bob, daily=daily, score=500, moves=80)
    board = friends_board(settings, alice, daily.date, Board.SCORE, mirrored=True)
    assert [e["player"] for e in board["entries"]] == ["bob", "alice"]
    assert "board mirror unavailable" in caplog.text
    # Bob's write was lost while Redis kept alice's stale view of the day.
    assert mirror._untrusted == {daily.date}

    settings.REDIS_URL = working
    board = friends_board(settings, alice, daily.date, Board.SCORE, mirrored=True)
    assert [e["player"] for e in board["entries"]] == ["bob", "alice"]
    assert mirror._untrusted == set()
    assert held(daily.date, alice, bob)[bob.pk][mirror.SCORE] == 500


def test_a_players_entries_of_a_day_are_of_one_game() -> None:
    at = datetime.datetime(2026, 5, 1, tzinfo=datetime.UTC)
    both = [("score", 7, 400, 90, True, 1_000, at), ("moves", 7, 400, 90, True, 1_000, at)]
    assert mirror.day_record(both) == mirror.DayRecord(
        mirror.ON_SCORE | mirror.ON_MOVES | mirror.WON, 7, 400, 90, 1_000, mirror.micros(at)
    )
    assert mirror.day_record([]) is mirror.NO_ENTRY
    with pytest.raises(ValueError, match="of one game"):
        mirror.day_record([both[0], ("moves", 8, 400, 90, True, 1_000, at)])
