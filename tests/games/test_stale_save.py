"""PATCH /api/daily/{date}/attempt/ from several devices: a save names the version it
extends, and a device that fell behind is refused with the stored game, never
written over it."""

from __future__ import annotations

import time
from typing import Any

import pytest
from rest_framework.test import APIClient

from games import rules
from games.models import Attempt
from games.services import attempt_save, attempt_start
from tests.fixtures import WIN_LOG, at_once, attempt_url, client_for, start

pytestmark = pytest.mark.django_db

# Another tenth action than the winning line's (an undo): a game that diverges.
DIVERGING = [*WIN_LOG[:10], "U"]


def save(client: APIClient, log: list[str], **body: Any) -> Any:
    return client.patch(attempt_url(), {"log": log, **body}, format="json")


def stored() -> Attempt:
    return Attempt.objects.get()


def test_the_attempt_starts_at_version_0_and_each_save_adds_one(alice, daily):
    started = start(client_for(alice)).json()

    first = save(client_for(alice), WIN_LOG[:10], version=0)
    second = save(client_for(alice), WIN_LOG[:20], version=1)

    assert started["version"] == 0
    assert (first.status_code, first.json()["version"]) == (200, 1)
    assert (second.status_code, second.json()["version"]) == (200, 2)
    assert client_for(alice).get(attempt_url()).json()["version"] == 2
    assert stored().log.split() == WIN_LOG[:20]


def test_a_device_behind_another_is_refused_with_the_stored_game(alice, daily):
    start(client_for(alice))
    tab_a, tab_b = client_for(alice), client_for(alice)
    a_version = save(tab_a, WIN_LOG[:10], version=0).json()["version"]
    # Tab B reads the attempt, plays further and saves.
    b_version = tab_b.get(attempt_url()).json()["version"]
    save(tab_b, WIN_LOG[:20], version=b_version)

    # Tab A plays one more action on its own, older game.
    response = save(tab_a, WIN_LOG[:11], version=a_version)

    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "stale_save"
    assert error["message"]
    assert (error["log"].split(), error["version"], error["actions"]) == (WIN_LOG[:20], 2, 20)
    assert stored().log.split() == WIN_LOG[:20]
    assert stored().version == 2
    assert [actions for _, actions in stored().saves] == [10, 20]


def test_a_stale_version_is_refused_even_when_its_log_is_longer(alice, daily):
    start(client_for(alice))
    save(client_for(alice), WIN_LOG[:10], version=0)
    save(client_for(alice), DIVERGING, version=1)

    # A device that saw version 1 (WIN_LOG[:10]) played on along the other line.
    response = save(client_for(alice), WIN_LOG[:30], version=1)

    assert response.status_code == 409
    assert response.json()["error"]["log"].split() == DIVERGING
    assert stored().log.split() == DIVERGING


def test_the_current_version_may_go_another_way(alice, daily):
    start(client_for(alice))
    save(client_for(alice), WIN_LOG[:11], version=0)

    response = save(client_for(alice), DIVERGING, version=1)

    assert (response.status_code, response.json()["version"]) == (200, 2)
    assert stored().log.split() == DIVERGING


def test_a_save_without_a_version_goes_through_when_it_extends_the_saved_log(alice, daily):
    start(client_for(alice))
    save(client_for(alice), WIN_LOG[:10])

    response = save(client_for(alice), WIN_LOG[:25])

    assert (response.status_code, response.json()["version"]) == (200, 2)
    assert stored().log.split() == WIN_LOG[:25]


@pytest.mark.parametrize(
    "log", [WIN_LOG[:11], DIVERGING, []], ids=["shorter", "diverging", "empty"]
)
def test_a_save_without_a_version_that_does_not_extend_the_saved_log_is_409(alice, daily, log):
    start(client_for(alice))
    save(client_for(alice), WIN_LOG[:20])

    response = save(client_for(alice), log)

    assert response.status_code == 409
    error = response.json()["error"]
    assert (error["code"], error["version"], error["log"].split()) == (
        "stale_save",
        1,
        WIN_LOG[:20],
    )
    assert stored().log.split() == WIN_LOG[:20]


def test_the_saved_log_sent_again_with_the_previous_version_is_answered_as_it_stands(alice, daily):
    start(client_for(alice))
    save(client_for(alice), WIN_LOG[:10], version=0)
    saved_at = stored().saved_at

    # The answer of that save was lost: the device sends it again, as it was.
    retry = save(client_for(alice), WIN_LOG[:10], version=0)
    without_version = save(client_for(alice), " ".join(WIN_LOG[:10]).lower())

    for response in (retry, without_version):
        assert response.status_code == 200, response.json()
        assert (response.json()["version"], response.json()["log"].split()) == (1, WIN_LOG[:10])
    assert stored().version == 1
    assert stored().saved_at == saved_at
    assert len(stored().saves) == 1


def test_a_version_of_the_wrong_type_is_a_validation_error(alice, daily):
    start(client_for(alice))

    responses = [save(client_for(alice), WIN_LOG[:5], version=v) for v in (-1, "one", 1.5)]

    for response in responses:
        assert response.status_code == 400
        assert "version" in response.json()["error"]["fields"]
    assert stored().version == 0


def test_an_illegal_log_is_a_400_whatever_the_version(alice, daily):
    start(client_for(alice))
    save(client_for(alice), WIN_LOG[:10], version=0)

    response = save(client_for(alice), ["S", "X9"], version=7)

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "illegal_action"


def test_the_openapi_schema_documents_the_version_and_the_stale_save(anon):
    schema = anon.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    components = schema["components"]["schemas"]
    patch = schema["paths"]["/api/daily/{date}/attempt/"]["patch"]

    assert "version" in components["Attempt"]["properties"]
    assert "version" in components["Attempt"]["required"]
    body = patch["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    version = components[body.rsplit("/", 1)[-1]]["properties"]["version"]
    assert (version["type"], version["minimum"]) == ("integer", 0)
    assert "`stale_save`" in patch["responses"]["409"]["description"]
    detail = components["ErrorDetail"]["properties"]
    assert {"log", "version", "actions"} <= set(detail)
    assert "stale_save" in detail["version"]["description"]


# --- At the same moment, on PostgreSQL ------------------------------------------------

real_replay = rules.replay


def slow_replay(*args: Any, **kwargs: Any) -> rules.Game:
    # Both saves read the attempt's version before either writes, unless the
    # player's lock keeps them apart.
    time.sleep(0.2)
    return real_replay(*args, **kwargs)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_saves_of_the_same_version_at_once_one_wins(alice, daily, monkeypatch):
    attempt_start(player=alice, date=daily.date)
    attempt_save(player=alice, date=daily.date, log=WIN_LOG[:10], version=0)
    monkeypatch.setattr("games.parsing.rules.replay", slow_replay)

    results = at_once(
        lambda: attempt_save(player=alice, date=daily.date, log=WIN_LOG[:20], version=1),
        lambda: attempt_save(player=alice, date=daily.date, log=DIVERGING, version=1),
    )

    refused = [r for r in results if isinstance(r, Exception)]
    (won,) = [r for r in results if isinstance(r, Attempt)]
    assert [getattr(error, "code", error) for error in refused] == ["stale_save"]
    assert refused[0].extra["log"] == won.log
    attempt = stored()
    assert (attempt.log, attempt.version) == (won.log, 2)
    assert len(attempt.saves) == 2
