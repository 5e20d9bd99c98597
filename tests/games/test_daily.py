"""GET /api/daily/ and /api/daily/{date}/: one stored deal per UTC day."""

from __future__ import annotations

import datetime
import io
import itertools
from dataclasses import replace

import pytest
from django.core.management import call_command
from django.test import override_settings

import games.solver
import games.tasks
from games.models import DailyDeal
from games.rules import Deal, replay
from games.services import daily_deal_candidates, daily_deal_is_acceptable, daily_deals_prepare
from games.solver import Solution
from tests.fixtures import client_for

# Days and hours matter here: `.ci/run` runs these again at the turn of a day.
pytestmark = [pytest.mark.django_db, pytest.mark.clock]


def prepare(date: datetime.date) -> DailyDeal:
    ((day, _new),) = daily_deals_prepare(first=date, days=1)
    return day


def test_today_once_prepared_is_the_same_for_everyone(anon, alice, today):
    day = prepare(today)

    first = anon.get("/api/daily/")
    second = client_for(alice).get("/api/daily/")

    assert first.status_code == 200
    assert first.json() == second.json()
    body = first.json()
    assert body["date"] == today.isoformat()
    assert body["number"] == day.number
    assert body["deal"] == Deal(day.number).code
    assert DailyDeal.objects.count() == 1


def test_reads_never_create_a_day(anon, today, monkeypatch):
    monkeypatch.setattr("games.services.daily_deal_store", mock_never_called)
    monkeypatch.setattr("games.solver.solve", mock_never_called)
    past = today - datetime.timedelta(days=3)

    for path in ["/api/daily/", f"/api/daily/{past.isoformat()}/"]:
        response = anon.get(path)
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "day_not_prepared"
    board = anon.get(f"/api/daily/{past.isoformat()}/leaderboard/")
    assert board.status_code == 404
    assert not DailyDeal.objects.exists()


def test_closes_at_is_the_next_utc_midnight(anon, today):
    prepare(today)
    body = anon.get("/api/daily/").json()

    closes = datetime.datetime.fromisoformat(body["closes_at"].replace("Z", "+00:00"))
    assert closes == datetime.datetime.combine(
        today + datetime.timedelta(days=1), datetime.time.min, tzinfo=datetime.UTC
    )


def test_a_prepared_past_day_is_served(anon, today):
    past = today - datetime.timedelta(days=3)
    prepare(past)

    response = anon.get(f"/api/daily/{past.isoformat()}/")

    assert response.status_code == 200
    assert response.json()["date"] == past.isoformat()
    assert response.json()["number"] == next(daily_deal_candidates(past))


def test_a_future_day_is_not_served(anon, today):
    tomorrow = today + datetime.timedelta(days=1)

    response = anon.get(f"/api/daily/{tomorrow.isoformat()}/")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "day_not_open"
    assert not DailyDeal.objects.exists()


@override_settings(DAILY_DEAL_FIRST_DATE=datetime.date(2026, 1, 1))
def test_a_day_before_the_first_is_not_served(anon):
    response = anon.get("/api/daily/2025-12-31/")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "day_not_served"


@pytest.mark.parametrize(
    "text", ["yesterday", "2026-02-30", "2026-1-1x", "20261201", "2026-W49-2", "2026-12-01T00"]
)
def test_a_date_that_is_not_a_date_is_404(anon, text):
    response = anon.get(f"/api/daily/{text}/")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_a_stored_day_never_changes_when_the_salt_does(today):
    day = prepare(today)

    with override_settings(DAILY_DEAL_SALT="another-secret"):
        again = prepare(today)

    assert (again.pk, again.number) == (day.pk, day.number)


def test_candidates_depend_on_the_date_and_the_secret_salt():
    date = datetime.date(2026, 3, 1)
    numbers = list(itertools.islice(daily_deal_candidates(date), 5))

    assert list(itertools.islice(daily_deal_candidates(date), 5)) == numbers
    assert all(1 <= n <= 999_999 for n in numbers)
    assert len(set(numbers)) == 5
    assert next(daily_deal_candidates(date + datetime.timedelta(days=1))) != numbers[0]
    with override_settings(DAILY_DEAL_SALT="another-secret"):
        assert next(daily_deal_candidates(date)) != numbers[0]


def test_the_first_acceptable_candidate_is_chosen_with_its_par_and_the_solvers_line(
    today, monkeypatch
):
    candidates = list(itertools.islice(daily_deal_candidates(today), 3))
    verdicts = {candidates[0]: (False, None, ""), candidates[1]: (True, 3, "S 37 WF")}
    monkeypatch.setattr(
        "games.services.daily_deal_is_acceptable",
        lambda number: verdicts.get(number, (True, None, "")),
    )

    day = prepare(today)

    assert (day.number, day.par, day.par_log) == (candidates[1], 3, "S 37 WF")


@pytest.mark.slow
def test_with_the_solver_a_deal_is_acceptable_when_it_is_won_and_its_par_is_that_win(
    settings, monkeypatch
):
    settings.DAILY_DEAL_REQUIRE_WIN = True
    settings.DAILY_DEAL_SOLVER_SECONDS = 3600
    real_solve = games.solver.solve
    answers = []

    def solve(*args, **kwargs):
        answers.append(real_solve(*args, **kwargs))
        return answers[-1]

    monkeypatch.setattr("games.solver.solve", solve)

    acceptable, par, line = daily_deal_is_acceptable(12345)

    (solution,) = answers
    assert (solution.result, solution.cut_short) == ("won", False)
    assert (acceptable, par) == (True, solution.moves)
    # The line is kept to compare submissions with, never solved again.
    assert line.split() == list(solution.log)
    assert replay(Deal(12345), line.split()).is_won


@pytest.mark.parametrize("result", ["unknown", "lost"])
def test_with_the_solver_a_deal_it_does_not_win_is_passed_over(settings, monkeypatch, result):
    settings.DAILY_DEAL_REQUIRE_WIN = True
    monkeypatch.setattr("games.solver.solve", lambda deal, **options: Solution(result, (), 10, 1.0))

    assert daily_deal_is_acceptable(12345) == (False, None, "")


def test_a_deal_whose_solve_the_time_cap_cut_short_is_passed_over(settings, monkeypatch, caplog):
    # Its win was shortened less than the par's work would have: not a par to store.
    settings.DAILY_DEAL_REQUIRE_WIN = True
    win = games.solver.solve(12345, work=games.solver.FIRST_WIN, seconds=600)
    capped = replace(win, cut_short=True)
    asked = []

    def solve(deal, **options):
        asked.append(options)
        return capped

    monkeypatch.setattr("games.solver.solve", solve)

    assert daily_deal_is_acceptable(12345) == (False, None, "")
    assert "deal 12345 passed over" in caplog.text
    # Asked for the par's work, deciding within the setting's positions, capped by its seconds.
    ((options),) = asked
    assert options["work"] == replace(games.solver.PAR, decide=settings.DAILY_DEAL_SOLVER_NODES)
    assert options["seconds"] == settings.DAILY_DEAL_SOLVER_SECONDS


def test_a_day_never_stores_a_par_that_was_cut_short(today, settings, monkeypatch):
    settings.DAILY_DEAL_REQUIRE_WIN = True
    first, second = itertools.islice(daily_deal_candidates(today), 2)
    win = games.solver.solve(second, work=games.solver.FIRST_WIN, seconds=600)

    def solve(deal, **options):
        return replace(win, cut_short=deal.number == first)

    monkeypatch.setattr("games.solver.solve", solve)

    day = prepare(today)

    assert (day.number, day.par) == (second, win.moves)


def test_without_require_win_every_deal_is_acceptable(settings, monkeypatch):
    settings.DAILY_DEAL_REQUIRE_WIN = False
    monkeypatch.setattr("games.solver.solve", mock_never_called)

    assert daily_deal_is_acceptable(12345) == (True, None, "")


def mock_never_called(*args, **kwargs):
    raise AssertionError("the solver must not run")


def test_days_prepared_ahead_are_served_only_on_their_day(anon, today):
    out = io.StringIO()
    call_command("prepare_daily_deals", "--days", "2", stdout=out)

    tomorrow = today + datetime.timedelta(days=1)
    assert set(DailyDeal.objects.values_list("date", flat=True)) == {today, tomorrow}
    assert anon.get(f"/api/daily/{tomorrow.isoformat()}/").status_code == 404
    stored = DailyDeal.objects.get(date=today).number
    assert anon.get("/api/daily/").json()["number"] == stored
    assert f"{today.isoformat()}: deal {stored}" in out.getvalue()


def test_the_prepare_job_stores_the_days_ahead_once(today, settings):
    settings.DAILY_DEAL_DAYS_AHEAD = 2

    assert games.tasks.deals_prepare() == "2 new day(s), 0 already stored"
    numbers = dict(DailyDeal.objects.values_list("date", "number"))
    # Run again (a retry, or two workers at once): nothing is chosen again.
    assert games.tasks.deals_prepare() == "0 new day(s), 2 already stored"

    tomorrow = today + datetime.timedelta(days=1)
    assert dict(DailyDeal.objects.values_list("date", "number")) == numbers
    assert set(numbers) == {today, tomorrow}


def test_a_prepare_run_past_its_time_leaves_the_days_after_to_the_next_run(
    today, settings, monkeypatch
):
    settings.DAILY_DEAL_DAYS_AHEAD = 3
    monkeypatch.setattr(games.tasks, "PREPARE_SECONDS", 0)

    # Each run chooses one day, then stops: its time is spent.
    assert games.tasks.deals_prepare() == "1 new day(s), 0 already stored, 2 left for the next run"
    assert games.tasks.deals_prepare() == "1 new day(s), 1 already stored, 1 left for the next run"
    assert games.tasks.deals_prepare() == "1 new day(s), 2 already stored"
    assert DailyDeal.objects.count() == 3


def test_a_past_day_with_no_deal_stored_says_nobody_played_it(anon, today):
    yesterday = today - datetime.timedelta(days=1)

    response = anon.get(f"/api/daily/{yesterday.isoformat()}/")

    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "day_not_prepared"
    assert error["message"] == (
        f"There was no deal of the day on {yesterday.isoformat()}: nobody played that day."
    )
