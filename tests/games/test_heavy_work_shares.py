"""The heavy work pool is shared in turn between client addresses (games/pool.py):
a player has one job under way, an address a few, and a job from an address
the pool has not served lately starts before the waiting jobs of one it has."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from easyharp_site.errors import ServiceError
from games import pool
from games.pool import Requester
from tests.fixtures import DEAL, client_for
from tests.games.blocking import died, held_until, written

FLOOD = "203.0.113.7"
ELSEWHERE = "198.51.100.20"


@pytest.fixture
def one_process(settings: Any) -> Iterator[None]:
    settings.HEAVY_WORK_PROCESSES, settings.HEAVY_WORK_QUEUE = 1, 8
    settings.HEAVY_WORK_PER_ADDRESS = 3
    yield


@pytest.fixture
def release(one_process: None, tmp_path: Path) -> Iterator[Path]:
    """A file whose creation lets the held jobs go (created at the end in any case)."""
    path = tmp_path / "release"
    yield path
    path.touch()


def hold(requester: Requester, release: Path) -> concurrent.futures.Future[str]:
    return pool.heavy_submit(held_until, requester=requester, path=str(release))


def busy_message(requester: Requester, release: Path) -> str:
    with pytest.raises(ServiceError) as refused:
        hold(requester, release)
    assert (refused.value.code, refused.value.status_code) == ("busy", 503)
    return str(refused.value.message)


def test_a_job_from_another_address_starts_before_the_waiting_jobs_of_a_flood(
    release: Path, tmp_path: Path
) -> None:
    order = tmp_path / "order"
    first = hold(Requester(FLOOD, 1), release)
    flood = [
        pool.heavy_submit(
            written, requester=Requester(FLOOD, player), path=str(order), word=f"flood {player}"
        )  # fmt: skip
        for player in (2, 3)
    ]
    bystander = pool.heavy_submit(
        written, requester=Requester(ELSEWHERE, 9), path=str(order), word="bystander"
    )

    release.touch()

    assert first.result(timeout=60) == "released"
    assert [job.result(timeout=60) for job in (*flood, bystander)]
    assert order.read_text().splitlines() == ["bystander", "flood 2", "flood 3"]


def test_a_players_second_job_is_refused_while_the_first_is_under_way(release: Path) -> None:
    first = hold(Requester(FLOOD, 1), release)

    message = busy_message(Requester(ELSEWHERE, 1), release)

    assert "under way already" in message
    release.touch()
    assert first.result(timeout=60) == "released"
    assert hold(Requester(FLOOD, 1), release).result(timeout=60) == "released"


def test_an_address_past_its_share_is_refused_and_another_address_still_waits_its_turn(
    release: Path,
) -> None:
    jobs = [hold(Requester(FLOOD, player), release) for player in (1, 2, 3)]

    message = busy_message(Requester(FLOOD, 4), release)
    jobs.append(hold(Requester(ELSEWHERE, 5), release))

    assert "Your address" in message
    release.touch()
    assert [job.result(timeout=60) for job in jobs] == ["released"] * 4


def test_a_job_given_up_while_it_waits_gives_its_place_back(release: Path) -> None:
    first = hold(Requester(FLOOD, 1), release)
    waiting = hold(Requester(FLOOD, 2), release)

    assert waiting.cancel()

    assert not pool._lines
    again = hold(Requester(FLOOD, 2), release)
    release.touch()
    assert first.result(timeout=60) == again.result(timeout=60) == "released"


@pytest.mark.django_db
def test_a_second_account_on_the_same_address_gets_a_503_past_the_addresss_share(
    bob: Any, release: Path, settings: Any
) -> None:
    settings.HEAVY_WORK_PER_ADDRESS = 1
    held = hold(Requester("127.0.0.1", None), release)

    response = client_for(bob).post("/api/hint/", {"deal": DEAL, "log": ""}, format="json")

    assert response.status_code == 503
    assert response.json()["error"]["code"] == "busy"
    release.touch()
    assert held.result(timeout=60) == "released"


def test_a_pool_process_that_dies_is_a_503_and_the_next_job_gets_a_new_pool(
    one_process: None, tmp_path: Path
) -> None:
    with pytest.raises(ServiceError) as refused:
        pool.heavy_run(died, requester=Requester(FLOOD, 1))

    assert refused.value.code == "busy"
    order = tmp_path / "order"
    again = pool.heavy_run(written, requester=Requester(FLOOD, 1), path=str(order), word="again")
    assert again == "again" and not pool._by_address
