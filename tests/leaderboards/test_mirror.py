"""The day's board entries mirrored in Redis (`leaderboards.mirror`), which friends boards read.

Every friends board read through the mirror must equal, entry for entry, the
board read from the table, through every way a player's entries change (a
ranked game, a void, a ban and its lifting, a deleted account) and every
way the audience changes (a follow). The mirror's writes must survive the
races they can meet: a build that read the table before a writer's commit
adds its stale record after it, and two writes of one record arrive out of
order. An incomplete mirror is never read; with Redis down the boards read
the table, and a day a writer could not mark is dropped once Redis is back.
"""

from __future__ import annotations

import datetime
import io
import re
import time

import pytest
import redis
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboards import mirror
from leaderboards.models import Board
from leaderboards.selectors import leaderboard_among
from leaderboards.services import board_mirror_build
from leagues.selectors import friends_sql
from leagues.services import follow_add
from ranking.actions import game_void, player_ban, player_delete, player_unban
from tests.fixtures import PASSWORD, client_for, play_ranked, stored_game

pytestmark = pytest.mark.redis


@pytest.fixture(autouse=True)
def _mirrored(settings):
    settings.BOARD_MIRROR = True


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
    (all in one test transaction) each written player stays pending, read from the table."""
    carol, dave, erin = make_player("carol"), make_player("dave"), make_player("erin")
    outsider = make_player("outsider")
    for followee in (bob, carol, dave, erin):
        follow_add(follower=alice, followee=followee)
    at = datetime.datetime(2026, 5, 1, 9, 0, tzinfo=datetime.UTC)

    def step(write, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=commits):
            return write(*args, **kwargs)

    # The day's mirror is built before anyone plays: it holds nobody, and is complete.
    assert board_mirror_build(date=daily.date) == 0
    assert held(daily.date, alice, bob) == {}
    assert assert_in_step(settings, alice, daily.date) == []

    step(stored_game, player=outsider, daily=daily, score=999, moves=10, won=True)
    step(stored_game, player=alice, daily=daily, score=400, moves=90, won=True, at=at)
    bobs = step(stored_game, player=bob, daily=daily, score=500, moves=80, won=True)
    # The same score and moves as alice's, later: the tie goes to the earlier game.
    later = at + datetime.timedelta(seconds=1)
    step(stored_game, player=carol, daily=daily, score=400, moves=90, won=True, at=later)
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

    # Each writer's record is in the mirror after its commit, pending before it.
    kinds = {player: fields[mirror.KIND] for player, fields in held(daily.date, dave, bob).items()}
    if commits:
        assert kinds == {dave.pk: mirror.ON_SCORE, bob.pk: mirror.NO_ENTRY.kind}
    else:
        assert kinds == {dave.pk: mirror.PENDING, bob.pk: mirror.PENDING}


def test_a_friends_board_is_read_from_the_mirror_in_two_statements(
    settings, alice, bob, daily, django_capture_on_commit_callbacks
) -> None:
    follow_add(follower=alice, followee=bob)
    with django_capture_on_commit_callbacks(execute=True):
        stored_game(player=alice, daily=daily, score=400, moves=90, won=True)
        bobs = stored_game(player=bob, daily=daily, score=300, moves=80, won=True)
    assert board_mirror_build(date=daily.date) == 2

    # The mirror alone decides the board: a record changed in it shows.
    richer = mirror.DayRecord(
        mirror.ON_SCORE | mirror.ON_MOVES | mirror.WON, bobs.pk, 900, 80, 1_000, 0
    )
    with django_capture_on_commit_callbacks(execute=True):
        version = mirror.mirror_pending(date=daily.date, player_id=bob.pk)
        mirror.mirror_store(date=daily.date, player_id=bob.pk, record=richer, version=version)
    with CaptureQueriesContext(connection) as queries:
        board = friends_board(settings, alice, daily.date, Board.SCORE, mirrored=True)
    assert [(e["player"], e["score"]) for e in board["entries"]] == [("bob", 900), ("alice", 400)]
    # The audience's ids, then the names of the players shown with the deal's number.
    assert len(queries) == 2
    # The page around a player too: the mirror's ranking places them.
    with CaptureQueriesContext(connection) as queries:
        board = friends_board(
            settings, alice, daily.date, Board.SCORE, mirrored=True, limit=1, around=alice.pk
        )
    assert [(e["rank"], e["player"]) for e in board["entries"]] == [(2, "alice")]
    assert len(queries) == 2


def test_the_friends_board_api_reads_the_mirror_after_real_submissions(
    settings, alice, bob, make_player, daily, django_capture_on_commit_callbacks
) -> None:
    carol = make_player("carol")
    follow_add(follower=alice, followee=bob)
    assert board_mirror_build(date=daily.date) == 0
    with django_capture_on_commit_callbacks(execute=True):
        for player, log in ((bob, "S S"), (alice, "S"), (carol, "S S S")):
            play_ranked(player, log)
    records = held(daily.date, alice, bob, carol)
    assert all(fields[mirror.KIND] == mirror.ON_SCORE for fields in records.values())

    url = f"/api/daily/{daily.date.isoformat()}/leaderboard/?order=score&scope=friends"
    from_mirror = client_for(alice).get(url).json()
    assert sorted(entry["player"] for entry in from_mirror["entries"]) == ["alice", "bob"]
    settings.BOARD_MIRROR = False
    assert client_for(alice).get(url).json() == from_mirror


def test_an_incomplete_mirror_is_never_read(settings, alice, bob, daily) -> None:
    follow_add(follower=alice, followee=bob)
    stored_game(player=bob, daily=daily, score=300, moves=80)
    # Bob's record is pending (its commit never comes in this test), alice has none.
    assert mirror.mirror_read(date=daily.date, player_ids=[alice.pk, bob.pk]) is None
    board = friends_board(settings, alice, daily.date, Board.SCORE, mirrored=True)
    assert [e["player"] for e in board["entries"]] == ["bob"]


def record(score: int) -> mirror.DayRecord:
    at = datetime.datetime(2026, 5, 1, 9, 0, tzinfo=datetime.UTC)
    return mirror.DayRecord(mirror.ON_SCORE, 7, score, 50, 1_000, mirror.micros(at))


def test_a_build_adds_only_where_no_writer_has_written(
    alice, bob, daily, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        stored = mirror.mirror_pending(date=daily.date, player_id=alice.pk)
        mirror.mirror_store(date=daily.date, player_id=alice.pk, record=record(400), version=stored)
    pending = mirror.mirror_pending(date=daily.date, player_id=bob.pk)
    assert pending is not None
    # A build that read the table before those writers' commits adds its stale records after.
    token = mirror.mirror_build_start(date=daily.date)
    assert token is not None
    assert mirror.mirror_add(date=daily.date, records={alice.pk: record(100), bob.pk: record(200)})
    assert mirror.mirror_build_finish(date=daily.date, token=token)
    assert held(daily.date, alice, bob) == {
        alice.pk: record(400),
        bob.pk: mirror.DayRecord(mirror.PENDING),
    }


def test_of_two_writes_arriving_out_of_order_the_later_one_stays(
    alice, daily, django_capture_on_commit_callbacks
) -> None:
    assert board_mirror_build(date=daily.date) == 0
    arrivals: list = []
    for score in (100, 200):
        with django_capture_on_commit_callbacks() as stores:
            v = mirror.mirror_pending(date=daily.date, player_id=alice.pk)
            assert v is not None
            mirror.mirror_store(
                date=daily.date, player_id=alice.pk, record=record(score), version=v
            )
        arrivals = [*stores, *arrivals]  # the later write's store arrives first
    for store in arrivals:
        store()
    assert held(daily.date, alice) == {alice.pk: record(200)}


def test_records_gathered_from_many_commits_are_written_together_each_as_alone(
    alice, bob, daily, django_capture_on_commit_callbacks
) -> None:
    # Under the server, the stores of a few milliseconds of submissions go to
    # Redis in one pipeline: each keeps its version rule, whatever the order.
    assert board_mirror_build(date=daily.date) == 0
    gathered = []
    for player, score in ((alice, 100), (bob, 300), (alice, 200)):
        with django_capture_on_commit_callbacks() as stores:
            v = mirror.mirror_pending(date=daily.date, player_id=player.pk)
            assert v is not None
            mirror.mirror_store(
                date=daily.date, player_id=player.pk, record=record(score), version=v
            )
        [store] = stores
        gathered.append(store.args[0])  # what the commit hands to the gathering
    mirror._stores.flush(gathered[::-1])  # alice's later write first
    assert held(daily.date, alice, bob) == {alice.pk: record(200), bob.pk: record(300)}


def test_versions_come_from_redis_clock_not_the_server_processes(alice, daily, monkeypatch) -> None:
    first = mirror.mirror_pending(date=daily.date, player_id=alice.pk)
    # The next writer of the player runs on a host whose clock is far behind.
    monkeypatch.setattr(time, "time_ns", lambda: 0)
    monkeypatch.setattr(time, "time", lambda: 0.0)
    second = mirror.mirror_pending(date=daily.date, player_id=alice.pk)
    assert first is not None and second is not None
    assert second > first
    assert abs(second / 1e6 - datetime.datetime.now(datetime.UTC).timestamp()) < 60


def test_a_build_is_not_complete_when_the_mirror_was_dropped_meanwhile(alice, daily) -> None:
    token = mirror.mirror_build_start(date=daily.date)
    assert token is not None
    mirror.mirror_add(date=daily.date, records={alice.pk: record(100)})
    redis.Redis.from_url(django_settings.CACHE_REDIS_URL).delete(f"eh:day-entries:{daily.date}")
    mirror.mirror_add(date=daily.date, records={})
    assert not mirror.mirror_build_finish(date=daily.date, token=token)
    assert not mirror.mirror_complete(date=daily.date)
    # A second build started over the first one is the one that completes.
    first, second = (mirror.mirror_build_start(date=daily.date) for _ in range(2))
    assert first is not None and second is not None
    assert not mirror.mirror_build_finish(date=daily.date, token=first)
    assert mirror.mirror_build_finish(date=daily.date, token=second)
    assert mirror.mirror_build_start(date=daily.date) is None


def test_a_build_reads_the_day_in_batches(make_player, daily) -> None:
    players = [make_player(f"p{n}") for n in range(5)]
    for n, player in enumerate(players):
        stored_game(player=player, daily=daily, score=100 * n, moves=50, won=n % 2 == 0)
    # Redis lost the day (the writers' records with it).
    redis.Redis.from_url(django_settings.CACHE_REDIS_URL).delete(f"eh:day-entries:{daily.date}")
    assert board_mirror_build(date=daily.date, batch=2) == 5
    records = held(daily.date, *players)
    assert [records[player.pk][mirror.SCORE] for player in players] == [0, 100, 200, 300, 400]
    assert [records[player.pk][mirror.KIND] for player in players] == [7, 1, 7, 1, 7]
    assert board_mirror_build(date=daily.date) is None


def test_the_hash_of_a_day_expires_days_after_the_day(alice, daily) -> None:
    assert board_mirror_build(date=daily.date) == 0
    client = redis.Redis.from_url(django_settings.CACHE_REDIS_URL)
    expires = client.expiretime(f"eh:day-entries:{daily.date.isoformat()}")
    day_end = datetime.datetime.combine(daily.date, datetime.time(), datetime.UTC)
    assert expires == int((day_end + datetime.timedelta(days=1 + mirror.KEEP_DAYS)).timestamp())

    # An older day's mirror, built again, lives an hour.
    old_day = daily.date - datetime.timedelta(days=30)
    before = int(time.time())
    assert board_mirror_build(date=old_day) == 0
    expires = client.expiretime(f"eh:day-entries:{old_day.isoformat()}")
    assert before + mirror.KEEP_SECONDS <= expires <= int(time.time()) + mirror.KEEP_SECONDS


def test_with_redis_down_the_boards_read_the_table_and_drop_the_day_when_it_is_back(
    settings, alice, bob, daily, django_capture_on_commit_callbacks, caplog, monkeypatch
) -> None:
    follow_add(follower=alice, followee=bob)
    with django_capture_on_commit_callbacks(execute=True):
        stored_game(player=alice, daily=daily, score=400, moves=90, won=True)
    assert board_mirror_build(date=daily.date) == 1
    assert mirror.mirror_complete(date=daily.date)

    working = settings.CACHE_REDIS_URL
    settings.CACHE_REDIS_URL = "redis://127.0.0.1:9/0"  # nothing listens there
    with django_capture_on_commit_callbacks(execute=True):
        stored_game(player=bob, daily=daily, score=500, moves=80, won=True)
    board = friends_board(settings, alice, daily.date, Board.SCORE, mirrored=True)
    assert [e["player"] for e in board["entries"]] == ["bob", "alice"]
    assert "board mirror unavailable" in caplog.text
    # Bob's record could not be marked pending: the complete mirror lacks his game.
    assert mirror._untrusted == {daily.date}

    # For PAUSE_SECONDS after the failure, this process does not even try Redis.
    assert mirror.mirror_read(date=daily.date, player_ids=[alice.pk]) is None
    settings.CACHE_REDIS_URL = working
    assert mirror.mirror_read(date=daily.date, player_ids=[alice.pk]) is None
    monkeypatch.setattr(mirror, "_paused_until", time.monotonic())
    board = friends_board(settings, alice, daily.date, Board.SCORE, mirrored=True)
    assert [e["player"] for e in board["entries"]] == ["bob", "alice"]
    assert mirror._untrusted == set()
    assert not mirror.mirror_complete(date=daily.date)
    assert board_mirror_build(date=daily.date) == 2
    assert held(daily.date, alice, bob)[bob.pk][mirror.SCORE] == 500


def test_the_command_builds_tomorrow_today_and_yesterday(settings, alice, daily, today) -> None:
    stored_game(player=alice, daily=daily, score=400, moves=90)
    out = io.StringIO()
    call_command("build_board_mirror", stdout=out)
    tomorrow, yesterday = (today + datetime.timedelta(days=n) for n in (1, -1))
    assert re.fullmatch(
        rf"{tomorrow}: 0 players in [\d.]+ s\n{today}: 1 players in [\d.]+ s\n"
        rf"{yesterday}: 0 players in [\d.]+ s\n",
        out.getvalue(),
    )
    out = io.StringIO()
    call_command("build_board_mirror", "--date", today.isoformat(), stdout=out)
    assert out.getvalue() == f"{today}: complete\n"
    settings.BOARD_MIRROR = False
    with pytest.raises(CommandError, match="the board mirror is off"):
        call_command("build_board_mirror")


def test_a_won_game_is_on_both_boards_and_a_lost_one_on_the_score_board() -> None:
    at = datetime.datetime(2026, 5, 1, tzinfo=datetime.UTC)
    game = {"game_id": 7, "score": 400, "moves": 90, "duration_ms": 1_000, "submitted_at": at}
    assert mirror.game_record(won=True, **game) == mirror.DayRecord(
        mirror.ON_SCORE | mirror.ON_MOVES | mirror.WON, 7, 400, 90, 1_000, mirror.micros(at)
    )
    assert mirror.game_record(won=False, **game) == mirror.DayRecord(
        mirror.ON_SCORE, 7, 400, 90, 1_000, mirror.micros(at)
    )


def test_a_friends_board_from_the_mirror_ranks_a_win_above_a_loss_that_outscored_it(
    settings, alice, bob, make_player, daily, django_capture_on_commit_callbacks
) -> None:
    carol = make_player("carol")
    for followee in (bob, carol):
        follow_add(follower=alice, followee=followee)
    with django_capture_on_commit_callbacks(execute=True):
        stored_game(player=alice, daily=daily, score=1300, moves=160)
        stored_game(player=bob, daily=daily, score=1280, moves=170, won=True)
        stored_game(player=carol, daily=daily, score=1220, moves=150, won=True)
    assert board_mirror_build(date=daily.date) == 3

    assert assert_in_step(settings, alice, daily.date) == ["bob", "carol", "alice"]
    board = friends_board(settings, alice, daily.date, Board.SCORE, mirrored=True)
    assert [(e["rank"], e["player"], e["won"]) for e in board["entries"]] == [
        (1, "bob", True),
        (2, "carol", True),
        (3, "alice", False),
    ]
    assert board["mine"][alice.pk]["rank"] == 3
