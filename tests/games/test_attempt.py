"""/api/daily/{date}/attempt/: the one ranked attempt of a player and day (start, read, save)."""

from __future__ import annotations

import datetime
import logging

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from games.models import Attempt, DailyDeal
from games.services import attempt_start
from tests.fixtures import (
    DEAL,
    WIN_LOG,
    attempt_url,
    client_for,
    rewind,
    start,
    submit,
)

# Days and hours matter here: `.ci/run` runs these again at the turn of a day.
pytestmark = [pytest.mark.django_db, pytest.mark.clock]


def save(client: APIClient, log: object, date: datetime.date | None = None) -> object:
    return client.patch(attempt_url(date), {"log": log}, format="json")


def test_starting_answers_201_with_an_open_unassisted_attempt_and_an_empty_log(alice, daily):
    response = start(client_for(alice))

    assert response.status_code == 201, response.json()
    body = response.json()
    attempt = Attempt.objects.get()
    assert body["id"] == attempt.pk
    assert (body["date"], body["deal"]) == (daily.date.isoformat(), DEAL)
    assert (body["status"], body["assisted"], body["log"]) == ("open", False, "")
    assert body["game"] is None and body["saved_at"] is None
    started = datetime.datetime.fromisoformat(body["started_at"].replace("Z", "+00:00"))
    assert started == attempt.started_at
    assert 0 <= body["elapsed_ms"] < 60_000


def test_starting_again_from_any_device_answers_200_with_the_same_attempt(alice, daily):
    first = start(client_for(alice)).json()

    # Another device, or the same browser with its storage cleared.
    again = start(client_for(alice))
    session = APIClient()
    session.force_login(alice)
    from_the_browser = session.post(attempt_url())

    assert again.status_code == from_the_browser.status_code == 200
    for later in (again.json(), from_the_browser.json()):
        assert (later["id"], later["started_at"]) == (first["id"], first["started_at"])
    assert Attempt.objects.count() == 1


def test_the_server_clock_runs_from_the_start_and_is_not_restarted(alice, daily):
    start(client_for(alice))
    rewind(alice, 90)

    again = start(client_for(alice)).json()

    assert 90_000 <= again["elapsed_ms"] < 150_000


def test_get_reads_the_attempt_and_is_404_before_it_is_started(alice, bob, daily):
    before = client_for(alice).get(attempt_url())
    start(client_for(alice))
    after = client_for(alice).get(attempt_url())

    assert before.status_code == 404
    assert before.json()["error"]["code"] == "no_attempt"
    assert after.status_code == 200
    assert after.json()["status"] == "open"
    # Each player sees only their own attempt.
    assert client_for(bob).get(attempt_url()).status_code == 404


def test_no_attempt_yet_is_a_normal_answer_not_a_logged_warning(alice, daily, caplog):
    """The play page asks on every signed-in load; "not started" is no incident."""
    with caplog.at_level(logging.DEBUG, logger="django.request"):
        answer = client_for(alice).get(attempt_url())
        unserved = client_for(alice).get("/api/daily/2026-13-01/attempt/")

    assert answer.status_code == 404 and answer.json()["error"]["code"] == "no_attempt"
    warned = [r for r in caplog.records if r.levelno >= logging.WARNING]
    # A date that is no date is still worth a warning; the normal answer is not.
    assert [r.status_code for r in warned] == [unserved.status_code]
    assert any(r.levelno == logging.DEBUG and r.status_code == 404 for r in caplog.records)


def test_a_save_keeps_the_game_so_far_for_another_device(alice, daily):
    start(client_for(alice))

    saved = save(client_for(alice), WIN_LOG[:30])
    elsewhere = client_for(alice).get(attempt_url()).json()

    assert saved.status_code == 200, saved.json()
    assert elsewhere["log"].split() == [token.upper() for token in WIN_LOG[:30]]
    assert elsewhere["saved_at"] is not None
    attempt = Attempt.objects.get()
    assert [actions for _, actions in attempt.saves] == [30]


def test_each_save_is_kept_with_its_time(alice, daily):
    start(client_for(alice))
    for length in (10, 25, 40):
        save(client_for(alice), WIN_LOG[:length])

    saves = Attempt.objects.get().saves

    assert [actions for _, actions in saves] == [10, 25, 40]
    times = [elapsed for elapsed, _ in saves]
    assert times == sorted(times) and times[0] >= 0


def test_a_refused_log_is_a_400_with_index_token_and_reason_and_saves_nothing(alice, daily):
    start(client_for(alice))
    save(client_for(alice), WIN_LOG[:10])

    response = save(client_for(alice), ["S", "S", "X9"])

    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["index"], error["token"], error["reason_code"]) == (
        "illegal_action",
        3,
        "X9",
        "unreadable_action",
    )
    assert error["reason"]
    attempt = Attempt.objects.get()
    assert len(attempt.log.split()) == 10
    assert len(attempt.saves) == 1


@pytest.mark.parametrize("log", [12, None, ["S", 3]])
def test_a_save_of_the_wrong_type_is_a_validation_error(alice, daily, log):
    start(client_for(alice))

    response = save(client_for(alice), log)

    assert response.status_code == 400
    assert "log" in response.json()["error"]["fields"]


def test_an_empty_log_with_the_current_version_saves_a_fresh_table(alice, daily):
    start(client_for(alice))
    save(client_for(alice), WIN_LOG[:5])

    response = client_for(alice).patch(attempt_url(), {"log": "", "version": 1}, format="json")

    assert response.status_code == 200
    assert response.json()["log"] == ""


def test_saving_before_starting_is_404(alice, daily):
    response = save(client_for(alice), WIN_LOG[:5])

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "no_attempt"
    assert not Attempt.objects.exists()


def test_a_submitted_attempt_is_closed_and_can_no_longer_be_saved(alice, daily):
    start(client_for(alice))
    game = submit(client_for(alice), WIN_LOG[:20]).json()

    response = save(client_for(alice), WIN_LOG[:30])
    read = client_for(alice).get(attempt_url()).json()

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "attempt_closed"
    assert response.json()["error"]["game"] == game["id"]
    assert (read["status"], read["game"]) == ("closed", game["id"])
    assert read["log"].split() == [token.upper() for token in WIN_LOG[:20]]
    assert read["elapsed_ms"] == game["duration_ms"]


def test_only_today_can_be_started_or_saved(alice, daily):
    yesterday = DailyDeal.objects.create(
        date=daily.date - datetime.timedelta(days=1), number=daily.number + 1
    )
    Attempt.objects.create(player=alice, daily=yesterday, started_at=timezone.now())

    started = start(client_for(alice), yesterday.date)
    saved = save(client_for(alice), ["S"], yesterday.date)
    read = client_for(alice).get(attempt_url(yesterday.date))

    for refused in (started, saved):
        assert refused.status_code == 409
        assert refused.json()["error"]["code"] == "day_closed"
    assert read.status_code == 200


def test_a_future_or_unprepared_day_or_a_bad_date_is_404(alice, daily):
    tomorrow = daily.date + datetime.timedelta(days=1)

    future = start(client_for(alice), tomorrow)
    unprepared = start(client_for(alice), daily.date - datetime.timedelta(days=5))
    nonsense = client_for(alice).post("/api/daily/someday/attempt/")

    assert future.json()["error"]["code"] == "day_not_open"
    assert unprepared.json()["error"]["code"] == "day_not_prepared"
    assert nonsense.json()["error"]["code"] == "not_found"
    assert {r.status_code for r in (future, unprepared, nonsense)} == {404}
    assert not Attempt.objects.exists()


@pytest.mark.parametrize("method", ["get", "post", "patch"])
def test_anonymous_players_have_no_attempt(anon, daily, method):
    response = getattr(anon, method)(attempt_url(), {"log": "S"}, format="json")

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    assert not Attempt.objects.exists()


def test_one_attempt_per_player_and_day_is_a_database_rule_too(alice, daily):
    attempt_start(player=alice, date=daily.date)

    with pytest.raises(IntegrityError), transaction.atomic():
        Attempt.objects.create(player=alice, daily=daily, started_at=timezone.now())


def test_the_openapi_schema_documents_the_attempt_and_the_new_fields(anon):
    schema = anon.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    components = schema["components"]["schemas"]

    attempt = schema["paths"]["/api/daily/{date}/attempt/"]
    assert set(attempt) >= {"get", "post", "patch"}
    assert set(attempt["post"]["responses"]) >= {"200", "201"}
    assert set(components["Attempt"]["properties"]) >= {
        "id",
        "date",
        "deal",
        "started_at",
        "status",
        "assisted",
        "log",
        "game",
        "elapsed_ms",
    }
    assert components["Attempt"]["properties"]["status"]["$ref"].endswith("StatusEnum")
    assert set(components["Game"]["properties"]) >= {"ranked", "assisted", "duration_ms"}
    assert "duration_ms" in components["LeaderboardEntry"]["properties"]
    submit_body = schema["paths"]["/api/games/"]["post"]["requestBody"]["content"]
    submitted = submit_body["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert components[submitted]["properties"]["times"]["type"] == "array"
    hint = schema["paths"]["/api/hint/"]["post"]["responses"]["200"]["content"]
    answered = hint["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert "assisted" in components[answered]["properties"]
