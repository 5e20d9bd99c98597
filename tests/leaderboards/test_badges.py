"""Badges of the month: folded from a player's counted days, at the month's edges too,
and read from the games each time (the player's page, the API)."""

from __future__ import annotations

import datetime

import pytest
import time_machine
from django.utils import translation
from django.utils.formats import date_format

from games.models import DailyDeal
from leaderboards.badges import CountedDay, month_badges, month_last
from tests.fixtures import client_for, stored_game

MARCH = datetime.date(2026, 3, 1)
SERVED_FROM = datetime.date(2026, 1, 1)


def days(first: datetime.date, count: int, *, won: bool = True, moves: int = 120, par=100):
    return [CountedDay(first + datetime.timedelta(days=n), won, moves, par) for n in range(count)]


def badges(counted, first=MARCH, served_from=SERVED_FROM):
    return {
        badge.code: badge for badge in month_badges(counted, first=first, served_from=served_from)
    }


def test_every_day_is_earned_on_the_months_last_day_and_not_with_one_day_missing():
    whole = badges(days(MARCH, 31, won=False))
    assert whole["every_day"].earned_on == datetime.date(2026, 3, 31)
    assert (whole["every_day"].progress, whole["every_day"].goal) == (31, 31)
    missing = days(MARCH, 31, won=False)
    del missing[14]
    short = badges(missing)["every_day"]
    assert not short.earned and short.progress == 30


def test_days_of_the_months_around_count_for_no_badge_of_this_one_but_the_streak():
    around = [
        *days(datetime.date(2026, 2, 1), 28, moves=90),  # all of February, under par
        *days(datetime.date(2026, 4, 1), 5, moves=90),  # early April
    ]
    march = badges(around)
    assert [badge.progress for code, badge in march.items() if code != "streak_30"] == [0, 0, 0]
    assert not any(badge.earned for badge in march.values())
    # February's days: each badge of February; a streak of 28 is not 30.
    february = badges(around, first=datetime.date(2026, 2, 1))
    assert february["every_day"].earned_on == datetime.date(2026, 2, 28)
    assert february["par_five"].earned_on == datetime.date(2026, 2, 5)
    assert february["ten_wins"].earned_on == datetime.date(2026, 2, 10)
    assert not february["streak_30"].earned and february["streak_30"].progress == 28


def test_par_five_counts_won_games_at_or_under_par_only():
    counted = [
        CountedDay(datetime.date(2026, 3, 1), True, 100, 100),  # at par
        CountedDay(datetime.date(2026, 3, 2), True, 101, 100),  # over par
        CountedDay(datetime.date(2026, 3, 3), False, 50, 100),  # not won
        CountedDay(datetime.date(2026, 3, 4), True, 50, None),  # a day without a par
        CountedDay(datetime.date(2026, 3, 5), True, 80, 100),
        CountedDay(datetime.date(2026, 3, 9), True, 99, 100),
        CountedDay(datetime.date(2026, 3, 20), True, 60, 100),
    ]
    assert badges(counted)["par_five"].progress == 4
    more = [*counted, CountedDay(datetime.date(2026, 3, 31), True, 100, 100)]
    assert badges(more)["par_five"].earned_on == datetime.date(2026, 3, 31)


def test_ten_wins_in_a_month_need_not_be_in_a_row():
    counted = [
        CountedDay(MARCH + datetime.timedelta(days=3 * n), n % 2 == 0, 120, 100) for n in range(11)
    ]  # won on days 1, 7, 13, 19, 25, 31
    assert badges(counted)["ten_wins"].progress == 6
    wins = badges(days(MARCH, 10) + days(datetime.date(2026, 3, 20), 1))["ten_wins"]
    assert wins.earned_on == datetime.date(2026, 3, 10)


def test_a_streak_begun_last_month_is_earned_on_its_thirtieth_day():
    counted = days(datetime.date(2026, 2, 15), 30)  # Feb 15 .. Mar 16
    streak = badges(counted)["streak_30"]
    assert streak.earned_on == datetime.date(2026, 3, 16)
    # One day short of it at the month's end: progress only.
    counted = days(datetime.date(2026, 3, 3), 29)  # Mar 3 .. 31
    streak = badges(counted)["streak_30"]
    assert not streak.earned and streak.progress == 29


def test_a_streak_still_standing_earns_the_badge_on_the_months_first_day():
    counted = days(datetime.date(2026, 1, 20), 60)  # Jan 20 .. Mar 20: 30 reached in February
    assert badges(counted)["streak_30"].earned_on == MARCH
    assert badges(counted, first=datetime.date(2026, 2, 1))["streak_30"].earned_on == (
        datetime.date(2026, 2, 18)
    )


def test_a_lost_day_or_a_day_not_played_breaks_the_streak():
    lost = days(datetime.date(2026, 2, 20), 40)
    lost[20] = lost[20]._replace(won=False)
    gap = days(datetime.date(2026, 2, 20), 40)
    del gap[20]
    for counted in (lost, gap):
        streak = badges(counted)["streak_30"]
        # 20 won days up to March 11th, then the break, then 19 more.
        assert not streak.earned and streak.progress == 20


def test_in_the_services_first_month_every_day_asks_for_the_days_served():
    served_from = datetime.date(2026, 3, 20)
    counted = days(served_from, 12, won=False)
    every_day = badges(counted, served_from=served_from)["every_day"]
    assert (every_day.goal, every_day.earned_on) == (12, datetime.date(2026, 3, 31))


def test_a_months_last_day():
    assert month_last(datetime.date(2028, 2, 1)) == datetime.date(2028, 2, 29)
    assert month_last(datetime.date(2026, 12, 1)) == datetime.date(2026, 12, 31)


# --- Read from the games ------------------------------------------------------------------


@pytest.fixture
def february(db):
    """Every day of February 2026 and the first of March, par 100 each."""
    first = datetime.date(2026, 2, 1)
    return [
        DailyDeal.objects.create(date=first + datetime.timedelta(days=n), number=500 + n, par=100)
        for n in range(29)
    ]


def test_the_api_counts_the_days_on_the_boards_and_lists_the_months_earned(
    february, alice, settings
):
    settings.LANGUAGE_CODE = "en"
    for day in february[:28]:
        stored_game(player=alice, daily=day, score=1250, moves=95, won=True, announce=True)
    # March 1st: played with a hint, on no board, so it counts for nothing.
    stored_game(
        player=alice,
        daily=february[28],
        score=1250,
        moves=95,
        won=True,
        assisted=True,
        announce=True,
    )
    client = client_for(None)

    body = client.get("/api/players/alice/badges/?month=2026-02").json()
    assert body["month"] == "2026-02"
    by_code = {badge["code"]: badge for badge in body["badges"]}
    assert by_code["every_day"] == {
        "code": "every_day",
        "mark": "★",
        "name": "Every day",
        "description": "A ranked game on every day of the month (28 days).",
        "goal": 28,
        "progress": 28,
        "earned": True,
        "earned_on": "2026-02-28",
        "earnable": True,
    }
    assert by_code["par_five"]["earned_on"] == "2026-02-05"
    assert by_code["streak_30"]["progress"] == 28 and not by_code["streak_30"]["earned"]
    assert [(badge["month"], badge["code"]) for badge in body["earned"]] == [
        ("2026-02", "every_day"),
        ("2026-02", "par_five"),
        ("2026-02", "ten_wins"),
    ]
    march = client.get("/api/players/alice/badges/?month=2026-03").json()
    assert not any(badge["earned"] for badge in march["badges"])
    # No counted day in March: February's streak stands on no day of it.
    assert {badge["progress"] for badge in march["badges"]} == {0}
    assert len(march["earned"]) == 3  # February's, listed in March's answer too


def test_the_badges_speak_the_readers_language(february, alice):
    stored_game(player=alice, daily=february[0], score=10, moves=95, won=True, announce=True)
    body = (
        client_for(None)
        .get("/api/players/alice/badges/?month=2026-02", HTTP_ACCEPT_LANGUAGE="nl")
        .json()
    )
    assert body["badges"][0]["name"] == "Elke dag"


@pytest.mark.parametrize(
    ("query", "status", "code"),
    [
        ("?month=2026-13", 400, "invalid"),
        ("?month=26-01", 400, "invalid"),
        ("?month=0000-01", 400, "invalid"),
        ("?month=\u0662\u0660\u0662\u0666-01", 400, "invalid"),
        ("?month=2025-12", 400, "month_not_served"),
        ("?month=2999-01", 400, "month_not_served"),
    ],
)
def test_a_month_not_written_yyyy_mm_or_not_served_is_refused(db, alice, query, status, code):
    answer = client_for(None).get(f"/api/players/alice/badges/{query}")
    assert answer.status_code == status
    assert answer.json()["error"]["code"] == code


def test_an_unknown_players_badges_are_a_404(db):
    assert client_for(None).get("/api/players/nobody/badges/").status_code == 404


def test_the_players_page_shows_this_months_badges(daily, alice, settings):
    stored_game(player=alice, daily=daily, score=1250, moves=95, won=True, announce=True)
    page = client_for(None).get("/players/alice/", HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert 'id="player-badges"' in page
    assert page.count('class="badge-item') == 4
    assert "Cinco bajo par" in page or "Par cinco" in page
    # The month by its name in the reader's language, not "2026-12".
    with translation.override("es"):
        month = date_format(daily.date.replace(day=1), "YEAR_MONTH_FORMAT")
    assert f"Insignias de {month}</h2>" in page
    assert daily.date.strftime("%Y-%m") + "</h2>" not in page


def test_a_player_who_starts_on_the_seventh_can_no_longer_earn_every_day_or_the_streak():
    seventh = datetime.date(2026, 3, 7)
    month = {
        badge.code: badge
        for badge in month_badges(
            days(seventh, 1), first=MARCH, served_from=SERVED_FROM, on=seventh
        )
    }
    # Six days of March missed; 25 days from the 7th to the 31st cannot make 30 in a row.
    assert not month["every_day"].earnable and not month["streak_30"].earnable
    assert month["par_five"].earnable and month["ten_wins"].earnable
    # On the 1st with nothing played yet, all four are still within reach.
    fresh = month_badges([], first=MARCH, served_from=SERVED_FROM, on=MARCH)
    assert all(badge.earnable for badge in fresh)


def test_a_streak_from_the_month_before_keeps_the_streak_badge_within_reach():
    # Won every day from February 10th: on March 5th the run is 24 days, and it can go on.
    counted = days(datetime.date(2026, 2, 10), 24)
    on = datetime.date(2026, 3, 5)
    month = {
        badge.code: badge
        for badge in month_badges(counted, first=MARCH, served_from=SERVED_FROM, on=on)
    }
    assert month["streak_30"].earnable and month["every_day"].earnable
    # Broken on the 4th (no game): the 27 days left from the 5th cannot make 30.
    broken = month_badges(counted[:-2], first=MARCH, served_from=SERVED_FROM, on=on)
    assert not {b.code: b for b in broken}["streak_30"].earnable


def test_only_eight_days_left_put_ten_wins_out_of_reach():
    on = datetime.date(2026, 3, 24)
    month = {
        b.code: b for b in month_badges(days(MARCH, 1), first=MARCH, served_from=SERVED_FROM, on=on)
    }
    # One win and 8 days (24th to 31st) left: 9 at most, not 10; par five still can be.
    assert not month["ten_wins"].earnable and month["par_five"].earnable


def test_the_players_page_says_a_badge_out_of_reach_is_not_earnable_this_month(db, alice):
    # The player's first game is on March 7th: every day and thirty in a row are out of reach.
    seventh = datetime.datetime(2026, 3, 7, 12, tzinfo=datetime.UTC)
    with time_machine.travel(seventh, tick=False):
        daily = DailyDeal.objects.create(date=seventh.date(), number=4)
        stored_game(player=alice, daily=daily, score=1250, moves=95, won=True, announce=True)
        page = client_for(None).get("/players/alice/").content.decode()
        spanish = client_for(None).get("/players/alice/", HTTP_ACCEPT_LANGUAGE="es")
    for code, earnable in [
        ("every_day", False),
        ("par_five", True),
        ("ten_wins", True),
        ("streak_30", False),
    ]:
        item = page.split(f'data-badge="{code}"')[1].split("</li>")[0]
        assert ("Not earnable this month" in item) == (not earnable), code
        assert ("<progress" in item) == earnable, code
    assert "1 of 31" not in page and "1 of 10" in page
    assert "No se puede conseguir este mes" in spanish.content.decode()
