"""`check_boards`: each derived copy of a day broken in turn is found, by kind and
player, and `--repair` puts it back as it was; a day in step reports nothing.

The day is a closed one with its points settled, so that every copy is there:
entries, counters, the players' records, final ranks, the day's results, day
points and standings (and, with Redis, the board mirror).
"""

from __future__ import annotations

import datetime
import io
from collections.abc import Callable
from typing import Any

import pytest
import redis
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.models import F
from django.utils import timezone

from games.models import DailyDeal
from leaderboards import audit, mirror
from leaderboards.models import (
    WON_AHEAD,
    BoardBucket,
    BoardCheck,
    BoardEntry,
    BoardTotal,
    DayResult,
    FinalRank,
    PlayerStats,
)
from leaderboards.selectors import board_buckets, board_totals, leaderboard_page
from leaderboards.services import (
    board_counts_fold,
    board_mirror_build,
    day_close,
    final_ranks_store,
)
from leagues.models import DayPoints, Period, SettledDay, Standing, StandingsPeriod
from leagues.periods import period_bounds
from leagues.services import day_points_settle, standings_rank, standings_settle
from ranking.actions import game_void
from ranking.audit import day_check, days_check_recent
from tests.fixtures import DEAL_NUMBER, stored_game

# Days and hours matter here: `.ci/run` runs these again at the turn of a day.
pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True), pytest.mark.clock]

MakePlayer = Callable[[str], AbstractBaseUser]


@pytest.fixture
def day(midday: datetime.datetime, make_player: MakePlayer, settings: Any) -> datetime.date:
    """Yesterday, closed and settled: ann won, ben lost, cat's game was voided, and
    dan played the day before too (a record of two days). The test runs at noon:
    in the first half hour after midnight the check leaves the close of
    yesterday to its job (`audit.JOB_GRACE`)."""
    settings.BOARD_MIRROR = False
    yesterday = timezone.now().date() - datetime.timedelta(days=1)
    daily = DailyDeal.objects.create(date=yesterday, number=DEAL_NUMBER)
    before = DailyDeal.objects.create(
        date=yesterday - datetime.timedelta(days=1), number=DEAL_NUMBER + 1
    )
    ann, ben, cat, dan = (make_player(name) for name in ("ann", "ben", "cat", "dan"))
    stored_game(player=ann, daily=daily, score=100, moves=120, won=True, announce=True)
    stored_game(player=ben, daily=daily, score=40, moves=90, announce=True)
    voided = stored_game(player=cat, daily=daily, score=90, moves=100, won=True, announce=True)
    game_void(game=voided)
    stored_game(player=dan, daily=before, score=60, moves=80, won=True, announce=True)
    stored_game(player=dan, daily=daily, score=70, moves=130, won=True, announce=True)
    for date in (before.date, yesterday):
        day_close(date=date)
        day_points_settle(date=date)
    for period in Period.values:
        standings_rank(period=period, start=period_bounds(period=period, at=yesterday)[0])
    return yesterday


def derived(date: datetime.date) -> dict[str, Any]:
    """Every derived copy of the day, without row ids or times of writing."""
    return {
        "entries": sorted(
            BoardEntry.objects.filter(date=date).values_list(
                "board", "player_id", "game_id", "key1", "key2", "duration_ms", "score", "moves"
            )
        ),
        "totals": sorted(board_totals(date=date).items()),
        "buckets": board_buckets(date=date),
        "ranks": sorted(
            FinalRank.objects.filter(entry__date=date).values_list(
                "entry__board", "entry__player_id", "rank"
            )
        ),
        "result": list(
            DayResult.objects.filter(date=date).values_list(
                "players", "won", "score_distribution", "moves_distribution"
            )
        ),
        # An empty record is no record.
        "records": sorted(
            PlayerStats.objects.exclude(played=0).values_list(
                "player_id", "played", "won", "last_date", "run_length", "max_streak"
            )
        ),
        "points": sorted(DayPoints.objects.values_list("date", "player_id", "rank", "points")),
        "standings": sorted(
            Standing.objects.values_list("period", "start", "player_id", "rank", "points")
        ),
        "settled": sorted(SettledDay.objects.values_list("date", "players", "stale")),
        "periods": sorted(StandingsPeriod.objects.values_list("period", "start", "players")),
    }


def player(name: str) -> int:
    return PlayerStats.objects.get(player__username=name).player_id


def found(date: datetime.date) -> tuple[set[tuple[str, int | None]], audit.CheckResult]:
    drifts: list[audit.Drift] = []
    result = day_check(date=date, on_drift=drifts.append)
    return {(drift.kind, drift.player_id) for drift in drifts}, result


def test_a_day_in_step_with_its_games_reports_nothing(day: datetime.date) -> None:
    out = io.StringIO()
    call_command("check_boards", "--date", day.isoformat(), stdout=out)

    assert out.getvalue().startswith(f"{day.isoformat()}: in step with its games")
    stored = BoardCheck.objects.get(date=day)
    assert stored.drift == {} and stored.examples == [] and not stored.repaired


def _entry_deleted(date: datetime.date) -> None:
    BoardEntry.objects.filter(date=date, board="moves", player__username="ann").delete()


def _entry_altered(date: datetime.date) -> None:
    BoardEntry.objects.filter(date=date, board="score", player__username="ben").update(score=99)


def _entry_of_a_voided_game(date: datetime.date) -> None:
    # As if the void's removal had been lost: cat's voided game back on the board.
    game = DailyDeal.objects.get(date=date).games.get(player__username="cat")
    BoardEntry.objects.create(
        date=date,
        board="score",
        player=game.player,
        game=game,
        key1=-game.score,
        key2=game.moves,
        submitted_at=game.created_at,
        score=game.score,
        moves=game.moves,
        won=game.won,
    )


def _total_altered(date: datetime.date) -> None:
    board_counts_fold()
    BoardTotal.objects.filter(date=date, board="score").update(players=F("players") + 5)


def _bucket_altered(date: datetime.date) -> None:
    board_counts_fold()
    BoardBucket.objects.filter(date=date, board="moves", key1=120).update(players=0)


def _record_altered(date: datetime.date) -> None:
    PlayerStats.objects.filter(player__username="dan").update(won=7, run_length=0)


def _record_deleted(date: datetime.date) -> None:
    PlayerStats.objects.filter(player__username="ann").delete()


def _final_rank_altered(date: datetime.date) -> None:
    FinalRank.objects.filter(entry__date=date, entry__player__username="ben").update(rank=9)


def _final_rank_deleted(date: datetime.date) -> None:
    FinalRank.objects.filter(entry__date=date, entry__player__username="dan").delete()


def _result_altered(date: datetime.date) -> None:
    DayResult.objects.filter(date=date).update(players=99, moves_distribution=[])


def _points_altered(date: datetime.date) -> None:
    DayPoints.objects.filter(date=date, player__username="ben").update(points=1)


def _standing_altered(date: datetime.date) -> None:
    Standing.objects.filter(period="month", player__username="ann").update(rank=3)


def _record_of_a_day_not_played(date: datetime.date) -> None:
    eve = get_user_model().objects.create_user(username="eve", password=None)
    PlayerStats.objects.create(player=eve, played=1, last_date=date, run_length=0)


def _close_missed(date: datetime.date) -> None:
    FinalRank.objects.filter(entry__date=date).delete()
    DayResult.objects.filter(date=date).delete()
    DayPoints.objects.filter(date=date).delete()
    SettledDay.objects.filter(date=date).delete()


def _settle_missed(date: datetime.date) -> None:
    DayPoints.objects.filter(date=date).delete()
    SettledDay.objects.filter(date=date).delete()
    DayResult.objects.filter(date=date).update(closed_at=timezone.now() - audit.JOB_GRACE * 2)


def _settled_count_altered(date: datetime.date) -> None:
    SettledDay.objects.filter(date=date).update(players=9)


def _standings_count_altered(date: datetime.date) -> None:
    StandingsPeriod.objects.filter(period="week").update(players=9)


BREAKS: list[tuple[Callable[[datetime.date], None], set[tuple[str, str | None]]]] = [
    # The moves entry goes with its final rank (a cascade).
    (_entry_deleted, {("entry", "ann"), ("final_rank", "ann")}),
    (_entry_altered, {("entry", "ben")}),
    (_entry_of_a_voided_game, {("entry", "cat")}),
    (_total_altered, {("counter", None)}),
    (_bucket_altered, {("counter", None)}),
    (_record_altered, {("record", "dan")}),
    (_record_deleted, {("record", "ann")}),
    (_final_rank_altered, {("final_rank", "ben")}),
    (_final_rank_deleted, {("final_rank", "dan")}),
    (_result_altered, {("day_result", None)}),
    # The week's and month's sums are of the stored day points: they differ too.
    (_points_altered, {("day_points", "ben"), ("standing", "ben")}),
    (_standing_altered, {("standing", "ann")}),
    (_record_of_a_day_not_played, {("record", "eve")}),
    # A day whose close never ran: closed and settled by the repair.
    (_close_missed, {("day_unclosed", None)}),
    (_settle_missed, {("day_unsettled", None)}),
    (_settled_count_altered, {("settled_count", None)}),
    (_standings_count_altered, {("standings_count", None)}),
]


@pytest.mark.parametrize(("damage", "expected"), BREAKS, ids=[b[0].__name__[1:] for b in BREAKS])
def test_each_copy_broken_is_found_and_mended(
    day: datetime.date,
    damage: Callable[[datetime.date], None],
    expected: set[tuple[str, str | None]],
) -> None:
    names = {player(name): name for name in ("ann", "ben", "dan")}
    names[DailyDeal.objects.get(date=day).games.get(player__username="cat").player_id] = "cat"
    before = derived(day)
    damage(day)
    eve = get_user_model().objects.filter(username="eve").values_list("pk", flat=True)
    names.update({pk: "eve" for pk in eve})

    kinds, result = found(day)
    assert {(kind, names.get(p) if p else None) for kind, p in kinds} == expected
    assert not result.clean and not result.repaired
    # Found again: a check alone mends nothing.
    assert found(day)[0] == kinds

    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_status:
        call_command("check_boards", "--date", day.isoformat(), "--repair", stdout=out)
    assert exit_status.value.code == 3  # drift was found (and mended)
    assert "mended" in out.getvalue()
    assert derived(day) == before
    assert found(day)[0] == set()
    assert BoardCheck.objects.get(date=day).drift == {}


def test_the_command_prints_each_difference_and_exits_1(day: datetime.date) -> None:
    _entry_altered(day)
    _total_altered(day)
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_status:
        call_command("check_boards", "--date", day.isoformat(), stdout=out)

    assert exit_status.value.code == 3
    lines = out.getvalue().splitlines()
    assert f"  entry: player {player('ben')}: score board: stored game" in "\n".join(lines)
    assert "  counter: score board total: stored 8, games give 3" in lines
    assert lines[-1].startswith(
        f"{day.isoformat()}: 2 difference(s), not mended (run with --repair): counter 1, entry 1"
    )
    stored = BoardCheck.objects.get(date=day)
    assert stored.drift == {"counter": 1, "entry": 1} and len(stored.examples) == 2


def test_the_scheduled_job_checks_and_mends_yesterday_and_today(day: datetime.date) -> None:
    today = DailyDeal.objects.create(date=timezone.now().date(), number=DEAL_NUMBER + 2)
    stored_game(
        player=PlayerStats.objects.get(player_id=player("ann")).player,
        daily=today,
        score=10,
        moves=10,
        announce=True,
    )
    before = derived(today.date)
    BoardEntry.objects.filter(date=today.date).delete()
    _record_altered(day)

    results = days_check_recent(days=2)

    assert [(r.date, dict(r.drift)) for r in results] == [
        (day, {"record": 1}),
        (today.date, {"entry": 1}),
    ]
    assert derived(today.date)["entries"] == before["entries"]
    assert all(found(date)[0] == set() for date in (day, today.date))


@pytest.mark.redis
def test_a_mirror_record_lost_or_wrong_is_found_and_mended(
    day: datetime.date, settings: Any
) -> None:
    settings.BOARD_MIRROR = True
    client = redis.Redis.from_url(django_settings.CACHE_REDIS_URL)
    key = f"eh:day-entries:{day.isoformat()}"
    client.delete(key)
    assert board_mirror_build(date=day) == 3
    assert found(day)[0] == set()
    ann, ben, dan = player("ann"), player("ben"), player("dan")
    records = mirror.mirror_read(date=day, player_ids=[ann, ben, dan])
    assert records is not None

    client.hdel(key, ann)
    client.hset(key, ben, client.hget(key, dan))  # ben shown with dan's game
    kinds, result = found(day)
    assert kinds == {("mirror", ann), ("mirror", ben)} and result.mirror_checked

    day_check(date=day, repair=True)
    assert mirror.mirror_read(date=day, player_ids=[ann, ben, dan]) == records
    assert found(day)[0] == set()


@pytest.mark.redis
def test_a_mirror_being_built_is_checked_for_the_records_it_holds(
    day: datetime.date, settings: Any
) -> None:
    settings.BOARD_MIRROR = True
    client = redis.Redis.from_url(django_settings.CACHE_REDIS_URL)
    key = f"eh:day-entries:{day.isoformat()}"
    client.delete(key)
    assert board_mirror_build(date=day) == 3
    ann, ben, dan = player("ann"), player("ben"), player("dan")
    client.hdel(key, "complete", ann)  # a build cut short: ann not added yet
    client.hset(key, ben, client.hget(key, dan))  # ben shown with dan's game

    out = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("check_boards", "--date", day.isoformat(), stdout=out)
    assert "board mirror being built or off: the records it holds checked" in out.getvalue()
    kinds, _ = found(day)
    assert kinds == {("mirror", ben)}  # ann is the build's to add

    day_check(date=day, repair=True)
    assert found(day)[0] == set()


def test_players_are_read_in_chunks(
    day: datetime.date, make_player: MakePlayer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Chunks of two players: entries of every chunk, the last one open-ended, are read.
    monkeypatch.setattr(audit, "CHUNK", 2)
    daily = DailyDeal.objects.get(date=day)
    assert list(audit._chunks(daily.pk)) == [
        (0, player("ben")),
        (player("ben"), player("dan")),
        (player("dan"), audit._NO_END),
    ]
    BoardEntry.objects.filter(date=day).update(moves=F("moves") + 1)
    assert {kind for kind, _ in found(day)[0]} == {"entry"}
    assert len(found(day)[0]) == 3


# --- Boards kept before a win ranked above every loss ---------------------------------


@pytest.fixture
def reordered_day(make_player: MakePlayer, settings: Any) -> datetime.date:
    """Yesterday, closed and settled: lou stopped one card short with 1,300 (stored
    first), pat won at 1,280, kim lost with 900. Wins first: pat, lou, kim."""
    settings.BOARD_MIRROR = False
    yesterday = timezone.now().date() - datetime.timedelta(days=1)
    daily = DailyDeal.objects.create(date=yesterday, number=DEAL_NUMBER)
    lou, pat, kim = (make_player(name) for name in ("lou", "pat", "kim"))
    stored_game(player=lou, daily=daily, score=1300, moves=160, announce=True)
    stored_game(player=pat, daily=daily, score=1280, moves=170, won=True, announce=True)
    stored_game(player=kim, daily=daily, score=900, moves=120, announce=True)
    day_close(date=yesterday)
    settle(yesterday)
    return yesterday


def settle(date: datetime.date) -> None:
    day_points_settle(date=date)
    for period in Period.values:
        standings_rank(period=period, start=period_bounds(period=period, at=date)[0])


def ordered_the_old_way(date: datetime.date) -> None:
    """The day as it was kept when the score alone came first: each won entry keyed by
    its score (its bucket with it), and the final ranks, day points and standings of
    that order."""
    board_counts_fold()
    for entry in BoardEntry.objects.filter(date=date, board="score", won=True):
        old_key = entry.key1 + WON_AHEAD
        BoardBucket.objects.filter(date=date, board="score", key1=entry.key1).delete()
        bucket, _ = BoardBucket.objects.get_or_create(date=date, board="score", key1=old_key)
        BoardBucket.objects.filter(pk=bucket.pk).update(players=F("players") + 1)
        BoardEntry.objects.filter(pk=entry.pk).update(key1=old_key)
    final_ranks_store(date=date, board="score")
    settle(date)


def score_ranks(date: datetime.date) -> dict[str, int]:
    return dict(
        FinalRank.objects.filter(entry__date=date, entry__board="score").values_list(
            "entry__player__username", "rank"
        )
    )


def test_a_day_ordered_the_old_way_is_found_and_ranked_wins_first(
    reordered_day: datetime.date,
) -> None:
    day = reordered_day
    before = derived(day)
    assert score_ranks(day) == {"pat": 1, "lou": 2, "kim": 3}
    ordered_the_old_way(day)
    assert score_ranks(day) == {"lou": 1, "pat": 2, "kim": 3}
    assert [e["player"] for e in leaderboard_page(date=day, order="score")["entries"]] == [
        "lou",
        "pat",
        "kim",
    ]

    # The standings add the stored day points: mended with them.
    kinds, _ = found(day)
    pat, lou = player("pat"), player("lou")
    assert kinds == {
        ("entry", pat),
        ("counter", None),
        ("final_rank", pat),
        ("final_rank", lou),
        ("day_points", pat),
        ("day_points", lou),
    }

    day_check(date=day, repair=True)
    assert derived(day) == before
    assert score_ranks(day) == {"pat": 1, "lou": 2, "kim": 3}
    assert found(day)[0] == set()


def test_the_migration_ranks_the_days_kept_the_old_way_wins_first(
    reordered_day: datetime.date,
) -> None:
    day = reordered_day
    before = derived(day)
    ordered_the_old_way(day)

    executor = MigrationExecutor(connection)
    executor.migrate(
        [("leaderboards", "0006_board_count_changes"), ("leagues", "0005_player_name_prefix_index")]
    )
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    # The entries, their buckets and the final ranks at once; the day's points went
    # stale, and the standings job settles them again.
    assert score_ranks(day) == {"pat": 1, "lou": 2, "kim": 3}
    assert SettledDay.objects.get(date=day).stale
    assert standings_settle(first_day=day) == [day]
    assert derived(day) == before
    assert found(day)[0] == set()
