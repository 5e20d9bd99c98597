"""Hints and replays run in the heavy work pool, away from the server process
(games/pool.py): a full pool answers at once, a replay is built once and kept,
and nothing waits for the pool holding a database connection."""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connections

from games import pool
from tests.fixtures import DEAL, WIN_LOG, client_for, close_day, submit
from tests.games.blocking import held_until

pytestmark = pytest.mark.django_db


@pytest.fixture
def one_process(settings: Any) -> Iterator[None]:
    """A pool of one process and no queue, so one held job fills it."""
    settings.HEAVY_WORK_PROCESSES, settings.HEAVY_WORK_QUEUE = 1, 0
    yield


@pytest.fixture
def held(one_process: None, tmp_path: Path) -> Iterator[concurrent.futures.Future[str]]:
    """The pool's one process held by a job, until the test ends."""
    release = tmp_path / "release"
    job = pool.heavy_submit(held_until, path=str(release))
    try:
        yield job
    finally:
        release.touch()
        assert job.result(timeout=60) == "released"


@pytest.fixture
def game_id(alice: Any, daily: Any) -> int:
    """A game of a day that has closed since: its replay is public."""
    game = int(submit(client_for(alice), WIN_LOG[:12]).json()["id"])
    close_day(daily)
    return game


def test_a_hint_when_the_pool_is_full_is_a_503_at_once_with_retry_after(
    anon: Any, held: Any
) -> None:
    started = time.monotonic()
    response = anon.post("/api/hint/", {"deal": DEAL, "log": ""}, format="json")

    assert time.monotonic() - started < 2
    assert response.status_code == 503
    assert response["Retry-After"] == "10"
    error = response.json()["error"]
    assert error["code"] == "busy" and "try again" in error["message"] and error["wait"] == 10


def test_a_hint_is_answered_again_once_the_pool_has_room(
    anon: Any, one_process: None, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    job = pool.heavy_submit(held_until, path=str(release))
    assert anon.post("/api/hint/", {"deal": DEAL, "log": ""}, format="json").status_code == 503
    release.touch()
    job.result(timeout=60)

    response = anon.post("/api/hint/", {"deal": DEAL, "log": "S"}, format="json")

    assert response.status_code == 200
    assert response.json()["result"] in {"move", "unknown"}


def test_a_refused_log_is_refused_from_the_pool_with_its_index(anon: Any) -> None:
    body = {"deal": "EH1-N-AAAAAAB", "log": "S W9 S 12"}  # the README's refused log

    response = anon.post("/api/hint/", body, format="json")

    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["index"], error["token"]) == ("illegal_action", 4, "12")


def test_the_days_deal_is_refused_before_any_work_even_with_the_pool_full(
    anon: Any, daily: Any, held: Any
) -> None:
    response = anon.post("/api/hint/", {"deal": daily.deal_code, "log": ""}, format="json")

    assert response.status_code == 403  # the lock, not the full pool
    assert response.json()["error"]["code"] == "replay_locked"


def test_a_replay_is_built_once_then_served_while_the_pool_is_full(
    anon: Any, game_id: int, one_process: None, tmp_path: Path
) -> None:
    first = anon.get(f"/api/games/{game_id}/replay/")
    release = tmp_path / "release"
    job = pool.heavy_submit(held_until, path=str(release))
    try:
        again = anon.get(f"/api/games/{game_id}/replay/")
        zipped = anon.get(f"/api/games/{game_id}/replay/", HTTP_ACCEPT_ENCODING="gzip")
    finally:
        release.touch()
        job.result(timeout=60)

    assert first.status_code == again.status_code == zipped.status_code == 200
    assert again.json() == first.json()
    assert zipped["Content-Encoding"] == "gzip" and "Accept-Encoding" in zipped["Vary"]
    assert len(first.json()["steps"]) == 12


def test_a_replay_not_kept_yet_is_a_503_when_the_pool_is_full(
    anon: Any, game_id: int, held: Any
) -> None:
    response = anon.get(f"/api/games/{game_id}/replay/")

    assert response.status_code == 503
    assert response["Retry-After"] == "10"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_request_waiting_for_the_pool_holds_no_database_connection(
    alice: Any, daily: Any, one_process: None, tmp_path: Path
) -> None:
    game = int(submit(client_for(alice), WIN_LOG[:12]).json()["id"])
    close_day(daily)
    release = tmp_path / "release"
    job = pool.heavy_submit(held_until, path=str(release))
    # The request's thread's own connection (Django keeps one per thread).
    requests_connection: list[Any] = []

    def read_replay() -> int:
        requests_connection.append(connections["default"])
        # Queued behind the held job: it waits for the pool.
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(pool.settings, "HEAVY_WORK_QUEUE", 1)
            return int(client_for(None).get(f"/api/games/{game}/replay/").status_code)

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as requests:
        reading = requests.submit(read_replay)
        try:
            # Once its job is queued behind the held one (it read the game
            # first, so it had opened a connection), the request gives its
            # connection back before it waits.
            deadline = time.monotonic() + 30
            while not pool._lines and time.monotonic() < deadline:
                time.sleep(0.01)
            assert pool._lines, "the request's job was not queued"
            [wrapper] = requests_connection
            while wrapper.connection is not None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert wrapper.connection is None
            assert not reading.done()
        finally:
            release.touch()
        assert reading.result(timeout=60) == 200
    assert job.result(timeout=60) == "released"
