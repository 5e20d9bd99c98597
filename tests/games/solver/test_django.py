"""The solver in the service: deals of the day, their par, the hint endpoint, the command."""

from __future__ import annotations

import datetime
import io
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from games import solver
from games.models import DailyDeal
from games.rules import Deal, replay
from games.services import daily_deal_candidates, daily_deal_store

pytestmark = pytest.mark.django_db

DAY = datetime.date(2026, 3, 14)


@pytest.mark.slow
def test_the_daily_selection_skips_a_deal_the_solver_cannot_win(settings, monkeypatch):
    settings.DAILY_DEAL_REQUIRE_WIN = True
    settings.DAILY_DEAL_SOLVER_SECONDS = 3600
    candidates = daily_deal_candidates(DAY)
    first, second = next(candidates), next(candidates)
    real_solve = solver.solve
    answers: dict[int, solver.Solution] = {}

    def solve(deal: Deal, **options: Any) -> solver.Solution:
        # The real solver, but with no work to speak of for the first candidate.
        if deal.number == first:
            options["work"] = solver.Work(decide=1)
        answers[deal.number] = real_solve(deal, **options)
        return answers[deal.number]

    monkeypatch.setattr("games.solver.solve", solve)

    day = daily_deal_store(date=DAY)

    assert (answers[first].result, answers[first].cut_short) == ("unknown", False)
    assert (answers[second].result, answers[second].cut_short) == ("won", False)
    assert (day.number, day.par) == (second, answers[second].moves)
    assert replay(Deal(second), answers[second].log).moves == day.par
    # The par is the par's work, whatever the machine: the same as solving it again.
    assert real_solve(second, seconds=3600).log == answers[second].log


def test_prepare_daily_deals_stores_the_next_30_days(settings):
    # Without the solver: this test is about the days, the next one about the par.
    settings.DAILY_DEAL_REQUIRE_WIN = False
    out = io.StringIO()

    call_command("prepare_daily_deals", "--start", DAY.isoformat(), stdout=out)

    days = list(DailyDeal.objects.order_by("date"))
    assert [day.date for day in days] == [DAY + datetime.timedelta(days=n) for n in range(30)]
    assert all(day.number == next(daily_deal_candidates(day.date)) for day in days)
    assert "30 new day(s) stored, 0 already stored." in out.getvalue()


@pytest.mark.slow
def test_prepare_daily_deals_gives_each_day_the_par_of_a_real_win(settings):
    settings.DAILY_DEAL_REQUIRE_WIN = True
    settings.DAILY_DEAL_SOLVER_SECONDS = 3600
    DailyDeal.objects.create(date=DAY, number=4, par=None)
    out = io.StringIO()

    call_command("prepare_daily_deals", "--start", DAY.isoformat(), "--days", "2", stdout=out)

    kept, new = DailyDeal.objects.order_by("date")
    assert (kept.number, kept.par) == (4, None)  # a stored day is never changed
    assert new.par is not None and new.par > 0
    # The solver's line is kept with the day, to compare submissions with.
    assert len(new.par_log.split()) == new.par
    assert replay(Deal(new.number), new.par_log.split()).is_won
    lines = out.getvalue().splitlines()
    assert lines[0].endswith("already stored")
    assert lines[-1] == "1 new day(s) stored, 1 already stored."


@pytest.mark.parametrize(
    ("argv", "message"),
    [(["--days", "0"], "1 to 366"), (["--start", "14/03/2026"], "YYYY-MM-DD")],
)
def test_prepare_daily_deals_refuses_bad_arguments(argv, message):
    with pytest.raises(CommandError, match=message):
        call_command("prepare_daily_deals", *argv)
    assert not DailyDeal.objects.exists()


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.mark.slow
def test_a_hint_is_the_next_action_of_a_win(api, settings):
    settings.HINT_SOLVER_SECONDS = 600
    response = api.post("/api/hint/", {"deal": "EH1-N-AAAAAAB", "log": "S W9 S"}, format="json")

    assert response.status_code == 200
    body = response.json()
    assert body["result"] == "move"
    assert body["moves_to_win"] > 0
    assert body["cut_short"] is False
    game = replay("EH1-N-AAAAAAB", ["S", "W9", "S", body["action"]])
    assert solver.solve_game(game, work=solver.FIRST_WIN, seconds=600).result == "won"


@pytest.mark.slow
def test_a_hint_takes_the_log_as_a_list_or_none(api, settings):
    settings.HINT_SOLVER_SECONDS = 600
    listed = api.post("/api/hint/", {"deal": "EH1-N-AAAAAAB", "log": ["S", "W9"]}, format="json")
    start = api.post("/api/hint/", {"deal": "EH1-N-AAAAAAB"}, format="json")

    assert listed.status_code == start.status_code == 200
    assert listed.json()["result"] == start.json()["result"] == "move"
    replay("EH1-N-AAAAAAB", ["S", "W9", listed.json()["action"]])
    replay("EH1-N-AAAAAAB", [start.json()["action"]])


def test_a_hint_says_when_its_work_ran_out(api, settings):
    settings.HINT_SOLVER_NODES = 1

    response = api.post("/api/hint/", {"deal": "EH1-N-AAAAAAB", "log": ""}, format="json")

    assert response.status_code == 200
    assert response.json() == {
        "result": "unknown",
        "action": None,
        "moves_to_win": None,
        "seconds": response.json()["seconds"],
        "assisted": False,
        "cut_short": False,
    }


def test_a_hint_says_when_its_time_cap_cut_it_short(api, settings):
    settings.HINT_SOLVER_SECONDS = 1e-9

    response = api.post("/api/hint/", {"deal": "EH1-N-AAAAAAB", "log": ""}, format="json")

    assert response.status_code == 200
    body = response.json()
    assert (body["result"], body["action"], body["cut_short"]) == ("unknown", None, True)


def test_a_hint_after_a_win_has_nothing_to_play(api):
    win = solver.solve(2, work=solver.FIRST_WIN, seconds=600)

    response = api.post("/api/hint/", {"deal": Deal(2).code, "log": list(win.log)}, format="json")

    assert response.status_code == 200
    assert response.json()["result"] == "won"
    assert response.json()["action"] is None


def test_a_hint_for_a_refused_log_is_a_400_with_the_action(api):
    response = api.post("/api/hint/", {"deal": "EH1-N-AAAAAAB", "log": "S 19"}, format="json")

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "illegal_action"
    assert (error["index"], error["token"]) == (2, "19")


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({"deal": "EH1-N-AAAAAAA", "log": ""}, "invalid_deal"),
        ({"deal": "EH1-N-AAAAAAB", "log": "S ZZ"}, "illegal_action"),
        ({"deal": "EH1-N-AAAAAAB", "log": 7}, None),
        ({"log": "S"}, None),
    ],
)
def test_a_bad_hint_request_is_a_400(api, payload, code):
    response = api.post("/api/hint/", payload, format="json")

    assert response.status_code == 400
    if code is not None:
        assert response.json()["error"]["code"] == code


def test_a_hint_log_longer_than_a_game_is_refused(api, settings):
    settings.GAME_MAX_ACTIONS = 5

    response = api.post("/api/hint/", {"deal": "EH1-N-AAAAAAB", "log": "S " * 6}, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "log_too_long"
