"""Weekly and monthly standings: day points by place on the day's score board, sums,
tie-breaks, the job that settles closed days, and the league's standings."""

from __future__ import annotations

import datetime

from django.core.management import call_command
from django.utils import timezone

from games.models import DailyDeal
from leaderboards import tasks as board_tasks
from leaderboards.models import DayResult
from leaderboards.services import day_close, days_to_close
from leagues import services, tasks
from leagues.models import DayPoints, SettledDay
from leagues.periods import period_bounds
from ranking.actions import game_void
from tests.fixtures import DEAL_NUMBER, client_for, stored_game

MONDAY = datetime.date(2026, 11, 23)


def day(offset: int) -> DailyDeal:
    return DailyDeal.objects.get_or_create(
        date=MONDAY + datetime.timedelta(days=offset), defaults={"number": DEAL_NUMBER}
    )[0]


def points(date: datetime.date) -> dict[str, tuple[int, int]]:
    return {
        row.player.username: (row.rank, row.points)
        for row in DayPoints.objects.filter(date=date).select_related("player")
    }


def close_days_over() -> None:
    """Close every day over, as the `close days` job does before the standings are settled."""
    for date in days_to_close(now=timezone.now()):
        day_close(date=date)


def test_a_days_points_go_by_place_on_the_days_score_board(db, make_player) -> None:
    players = [make_player(f"p{n}") for n in range(4)]
    monday = day(0)
    for n, player in enumerate(players):
        stored_game(player=player, daily=monday, score=100 - n, moves=10)

    services.day_points_settle(date=monday.date)

    # 10 + floor(90 * (N - rank + 1) / N) with N = 4.
    assert points(monday.date) == {
        "p0": (1, 100),
        "p1": (2, 77),
        "p2": (3, 55),
        "p3": (4, 32),
    }


def test_a_day_that_has_not_closed_is_not_settled(db, daily) -> None:
    services.standings_settle(first_day=daily.date - datetime.timedelta(days=3))
    assert not SettledDay.objects.filter(date=daily.date).exists()


def test_weekly_standings_sum_the_days_of_the_week(db, make_player) -> None:
    ann, ben, cat = (make_player(name) for name in ("ann", "ben", "cat"))
    # Monday: ann first, ben second of two. Tuesday: ben alone. Next Monday: cat.
    stored_game(player=ann, daily=day(0), score=90, moves=10)
    stored_game(player=ben, daily=day(0), score=80, moves=10)
    stored_game(player=ben, daily=day(1), score=10, moves=10)
    stored_game(player=cat, daily=day(7), score=10, moves=10)
    close_days_over()

    services.standings_settle(first_day=MONDAY)
    standings = client_for(ann).get("/api/standings/?period=week&at=2026-11-25").json()

    assert [
        (e["rank"], e["player"], e["points"], e["days"], e["best"]) for e in standings["entries"]
    ] == [(1, "ben", 155, 2, 100), (2, "ann", 100, 1, 100)]
    assert standings["start"] == "2026-11-23" and standings["end"] == "2026-11-29"
    assert standings["settled_through"] == "2026-11-29"
    assert standings["total"] == 2
    assert standings["me"]["rank"] == 2
    page = client_for(ann).get("/api/standings/?period=week&at=2026-11-25&limit=1&offset=1")
    assert [e["player"] for e in page.json()["entries"]] == ["ann"]


def test_ties_on_points_go_to_more_days_then_the_better_best_day_then_the_older_account(
    db, make_player
) -> None:
    names = ("late", "early", "steady", "spiky", "flat")
    players = {name: make_player(name) for name in names}
    week = {
        # Every player totals 120 points.
        "late": [60, 60],  # ties with early on everything: the older account wins
        "early": [60, 60],
        "steady": [40, 40, 40],  # three days: ahead of every two-day player
        "spiky": [100, 20],  # two days, best day 100: ahead of the 60 + 60s
        "flat": [120 // 1],  # one day: last
    }
    # "early" must be the older account: recreate "late" after it.
    players["late"].delete()
    players["late"] = make_player("late")
    for name, days in week.items():
        for offset, value in enumerate(days):
            DayPoints.objects.create(
                date=MONDAY + datetime.timedelta(days=offset),
                player=players[name],
                rank=1,
                points=value,
            )

    services.standings_rank(period="week", start=MONDAY)
    entries = client_for(players["flat"]).get("/api/standings/?at=2026-11-23").json()["entries"]

    assert [(e["player"], e["points"], e["days"], e["best"]) for e in entries] == [
        ("steady", 120, 3, 40),
        ("spiky", 120, 2, 100),
        ("early", 120, 2, 60),
        ("late", 120, 2, 60),
        ("flat", 120, 1, 120),
    ]


def test_the_month_sums_every_settled_day_of_the_month(db, make_player) -> None:
    ann = make_player("ann")
    stored_game(player=ann, daily=day(0), score=10, moves=10)  # 23 November
    stored_game(player=ann, daily=day(8), score=10, moves=10)  # 1 December
    close_days_over()
    services.standings_settle(first_day=MONDAY)

    november = client_for(ann).get("/api/standings/?period=month&at=2026-11-02").json()

    assert november["start"] == "2026-11-01" and november["end"] == "2026-11-30"
    assert [(e["player"], e["points"], e["days"]) for e in november["entries"]] == [("ann", 100, 1)]


def test_a_void_after_the_day_closed_is_counted_at_the_next_run(db, make_player) -> None:
    ann, ben = make_player("ann"), make_player("ben")
    cheat = stored_game(player=ben, daily=day(0), score=90, moves=10)
    stored_game(player=ann, daily=day(0), score=10, moves=10)
    close_days_over()
    call_command("settle_standings", "--since", MONDAY.isoformat(), verbosity=0)
    assert points(MONDAY)["ann"] == (2, 55)

    game_void(game=cheat)
    assert SettledDay.objects.get(date=MONDAY).stale
    call_command("settle_standings", "--since", MONDAY.isoformat(), verbosity=0)

    assert points(MONDAY) == {"ann": (1, 100)}
    entries = client_for(ann).get("/api/standings/?period=week&at=2026-11-23").json()["entries"]
    assert [(e["player"], e["points"]) for e in entries] == [("ann", 100)]


def test_a_league_ranks_its_members_in_the_standings_among_them(db, make_player) -> None:
    ann, ben, cat = make_player("ann"), make_player("ben"), make_player("cat")
    stored_game(player=cat, daily=day(0), score=90, moves=10)
    stored_game(player=ben, daily=day(0), score=50, moves=10)
    stored_game(player=ann, daily=day(0), score=10, moves=10)
    close_days_over()
    services.standings_settle(first_day=MONDAY)
    league = services.league_create(owner=ann, name="Ours")
    services.league_join(player=ben, code=league.invite_code)

    standings = (
        client_for(ann)
        .get(f"/api/leagues/{league.slug}/standings/?period=week&at=2026-11-24")
        .json()
    )

    assert [(e["rank"], e["player"], e["points"]) for e in standings["entries"]] == [
        (1, "ben", 70),
        (2, "ann", 40),
    ]
    assert standings["me"]["rank"] == 2
    assert standings["settled_through"] is not None


def test_standings_refuse_a_bad_period_or_day(db, alice) -> None:
    for query in ("period=year", "at=2026-13-01", "at=tomorrow"):
        refused = client_for(alice).get(f"/api/standings/?{query}")
        assert refused.status_code == 400, query
        assert refused.json()["error"]["code"] == "invalid"


def test_period_bounds() -> None:
    assert period_bounds(period="week", at=datetime.date(2026, 11, 29)) == (
        MONDAY,
        datetime.date(2026, 11, 29),
    )
    assert period_bounds(period="month", at=datetime.date(2028, 2, 10))[1] == datetime.date(
        2028, 2, 29
    )


def test_the_standings_job_settles_the_closed_days_once(
    transactional_db, make_player, settings
) -> None:
    settings.DAILY_DEAL_FIRST_DATE = MONDAY
    stored_game(player=make_player("ann"), daily=day(0), score=90, moves=10)
    due = (timezone.now().date() - MONDAY).days  # every day from Monday to yesterday
    close_days_over()

    assert tasks.standings_refresh() == f"{due} day(s) settled"
    settled = list(SettledDay.objects.values_list("date", "settled_at"))
    assert points(MONDAY) == {"ann": (1, 100)}
    # Run again (a retry, or the next turn): nothing new to settle, nothing written.
    assert tasks.standings_refresh() == "0 day(s) settled"
    assert list(SettledDay.objects.values_list("date", "settled_at")) == settled
    assert points(MONDAY) == {"ann": (1, 100)}


def test_a_day_over_waits_for_its_close_before_it_is_settled(db, make_player) -> None:
    ann, ben = make_player("ann"), make_player("ben")
    yesterday = DailyDeal.objects.create(
        date=timezone.now().date() - datetime.timedelta(days=1), number=DEAL_NUMBER
    )
    stored_game(player=ann, daily=yesterday, score=90, moves=10)
    stored_game(player=ben, daily=yesterday, score=10, moves=10)

    assert services.days_awaiting_close(first_day=yesterday.date) == [yesterday.date]
    assert services.standings_settle(first_day=yesterday.date) == []
    assert not SettledDay.objects.filter(date=yesterday.date).exists()
    assert not DayPoints.objects.filter(date=yesterday.date).exists()

    day_close(date=yesterday.date)
    assert services.days_awaiting_close(first_day=yesterday.date) == []
    assert services.standings_settle(first_day=yesterday.date) == [yesterday.date]
    assert points(yesterday.date) == {"ann": (1, 100), "ben": (2, 55)}


def test_the_standings_job_settles_a_day_only_after_the_close_job_closed_it(
    db, make_player, settings
) -> None:
    # The two jobs run on their own schedules: the standings' may come first.
    settings.DAILY_DEAL_FIRST_DATE = timezone.now().date() - datetime.timedelta(days=1)
    yesterday = DailyDeal.objects.create(date=settings.DAILY_DEAL_FIRST_DATE, number=DEAL_NUMBER)
    stored_game(player=make_player("ann"), daily=yesterday, score=90, moves=10)

    assert tasks.standings_refresh() == "0 day(s) settled"
    assert not SettledDay.objects.exists()
    assert board_tasks.days_close() == "1 day(s) closed"
    assert tasks.standings_refresh() == "1 day(s) settled"
    closed = DayResult.objects.get(date=yesterday.date)
    settled = SettledDay.objects.get(date=yesterday.date)
    assert closed.closed_at <= settled.settled_at
    assert points(yesterday.date) == {"ann": (1, 100)}
