"""GET /api/daily/ and /api/daily/{date}/: one stored deal per UTC day."""

from __future__ import annotations

import datetime
import itertools

import pytest
from django.test import override_settings

from games.models import DailyDeal
from games.services import daily_deal_candidates, daily_deal_get_or_create
from tests.games.conftest import client_for

pytestmark = pytest.mark.django_db


def test_today_is_stored_on_first_request_and_the_same_for_everyone(anon, alice, today):
    first = anon.get("/api/daily/")
    second = client_for(alice).get("/api/daily/")

    assert first.status_code == 200
    assert first.json() == second.json()
    body = first.json()
    day = DailyDeal.objects.get(date=today)
    assert body["date"] == today.isoformat()
    assert body["number"] == day.number
    assert body["deal"].startswith("EH1-N-") and len(body["deal"]) == 13
    assert DailyDeal.objects.count() == 1


def test_closes_at_is_the_next_utc_midnight(anon, today):
    body = anon.get("/api/daily/").json()

    closes = datetime.datetime.fromisoformat(body["closes_at"].replace("Z", "+00:00"))
    assert closes == datetime.datetime.combine(
        today + datetime.timedelta(days=1), datetime.time.min, tzinfo=datetime.UTC
    )


def test_a_past_day_is_served(anon, today):
    past = today - datetime.timedelta(days=3)

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


@override_settings(DAILY_DEAL_FIRST_DATE="2026-01-01")
def test_a_day_before_the_first_is_not_served(anon):
    response = anon.get("/api/daily/2025-12-31/")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "day_not_served"


@pytest.mark.parametrize("text", ["yesterday", "2026-02-30", "2026-1-1x"])
def test_a_date_that_is_not_a_date_is_404(anon, text):
    response = anon.get(f"/api/daily/{text}/")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_a_stored_day_never_changes_when_the_salt_does(today):
    day = daily_deal_get_or_create(date=today)

    with override_settings(DAILY_DEAL_SALT="another-secret"):
        again = daily_deal_get_or_create(date=today)

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


def test_the_first_acceptable_candidate_is_chosen_with_its_par(today, monkeypatch):
    candidates = list(itertools.islice(daily_deal_candidates(today), 3))
    verdicts = {candidates[0]: (False, None), candidates[1]: (True, 87)}
    monkeypatch.setattr(
        "games.services.daily_deal_is_acceptable", lambda number: verdicts.get(number, (True, None))
    )

    day = daily_deal_get_or_create(date=today)

    assert (day.number, day.par) == (candidates[1], 87)


def test_with_the_solver_a_deal_is_acceptable_when_it_is_won_and_its_par_is_that_win(
    settings, monkeypatch
):
    import games.solver
    from games.rules import Deal, replay
    from games.services import daily_deal_is_acceptable

    settings.DAILY_DEAL_REQUIRE_WIN = True
    settings.DAILY_DEAL_SOLVER_SECONDS = 30
    real_solve = games.solver.solve
    answers = []

    def solve(*args, **kwargs):
        answers.append(real_solve(*args, **kwargs))
        return answers[-1]

    monkeypatch.setattr("games.solver.solve", solve)

    acceptable, par = daily_deal_is_acceptable(12345)

    (solution,) = answers
    assert solution.result == "won"
    assert (acceptable, par) == (True, solution.moves)
    assert replay(Deal(12345), solution.log).is_won


@pytest.mark.parametrize("result", ["unknown", "lost"])
def test_with_the_solver_a_deal_it_does_not_win_is_passed_over(settings, monkeypatch, result):
    from games.services import daily_deal_is_acceptable
    from games.solver import Solution

    settings.DAILY_DEAL_REQUIRE_WIN = True
    monkeypatch.setattr(
        "games.solver.solve", lambda deal, seconds: Solution(result, (), 10, seconds)
    )

    assert daily_deal_is_acceptable(12345) == (False, None)


def test_without_require_win_every_deal_is_acceptable(settings, monkeypatch):
    from games.services import daily_deal_is_acceptable

    settings.DAILY_DEAL_REQUIRE_WIN = False
    monkeypatch.setattr("games.solver.solve", mock_never_called)

    assert daily_deal_is_acceptable(12345) == (True, None)


def mock_never_called(*args, **kwargs):
    raise AssertionError("the solver must not run")


def test_days_prepared_ahead_are_served_only_on_their_day(anon, today):
    import io

    from django.core.management import call_command

    out = io.StringIO()
    call_command("prepare_daily_deals", "--days", "2", stdout=out)

    tomorrow = today + datetime.timedelta(days=1)
    assert set(DailyDeal.objects.values_list("date", flat=True)) == {today, tomorrow}
    assert anon.get(f"/api/daily/{tomorrow.isoformat()}/").status_code == 404
    stored = DailyDeal.objects.get(date=today).number
    assert anon.get("/api/daily/").json()["number"] == stored
    assert f"{today.isoformat()}: deal {stored}" in out.getvalue()
