"""A real server whose Redis is away (REDIS_URL at a closed port): it keeps serving,
keeps its rate limits (counted in the process, said once in the log), draws share
pictures without the cache and says it is degraded on /healthz/."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.servers import uvicorn

DAY = "2026-01-01"
PASSWORD = "redis-away-passphrase-42"


@pytest.fixture(scope="module")
def server_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("redis-away-log") / "server.log"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, server_log: Path) -> Iterator[str]:
    """Production-like settings, the default limits, and Redis at a port nobody listens on."""
    database = tmp_path_factory.mktemp("redis-away") / "db.sqlite3"
    env = {
        **{
            k: v
            for k, v in os.environ.items()
            if k not in {"REDIS_URL", "DATABASE_URL"} and not k.startswith("THROTTLE_")
        },
        "DATABASE_URL": f"sqlite:///{database}",
        "DEBUG": "false",
        "SECRET_KEY": "redis-away-test-" + "k" * 40,
        "DAILY_DEAL_SALT": "redis-away-test",
        "DAILY_DEAL_REQUIRE_WIN": "false",
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "false",
        "SECURE_COOKIES": "false",
        "LOG_LEVEL": "WARNING",
    }
    # Migrations and the day's deal need no Redis; the server gets a dead one.
    with uvicorn(
        {**env, "REDIS_URL": "redis://127.0.0.1:1/0"},
        days=[DAY],
        stderr=server_log.open("wb"),
    ) as address:
        yield f"http://{address}"


def post(base: str, path: str, body: dict[str, str]) -> int:
    return httpx.post(f"{base}{path}", json=body, timeout=30).status_code


def test_healthz_says_degraded_and_what_still_works(server: str) -> None:
    answer = httpx.get(f"{server}/healthz/", timeout=30)
    assert answer.status_code == 200
    health = answer.json()
    assert health["status"] == "degraded"
    assert health["redis"] == "unavailable"
    assert health["database"] == "ok"
    assert any("rate limits" in line for line in health["works"])


def test_share_pictures_are_drawn_without_the_cache(server: str) -> None:
    answer = httpx.get(f"{server}/cards/days/{DAY}.png", timeout=30)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "image/png"
    assert answer.content.startswith(b"\x89PNG")


def test_sign_ups_keep_their_limit(server: str) -> None:
    statuses = Counter(
        post(server, "/api/auth/register/", {"username": f"away{i}", "password": PASSWORD})
        for i in range(25)
    )
    assert statuses == Counter({201: 20, 429: 5})


def test_password_guesses_keep_their_limit(server: str) -> None:
    statuses = Counter(
        post(server, "/api/auth/token/", {"username": "away0", "password": f"guess-{i}"})
        for i in range(45)
    )
    assert statuses[401] <= 20
    assert statuses[429] >= 25


def test_the_outage_of_the_limits_is_logged_once(server: str, server_log: Path) -> None:
    log = server_log.read_text(errors="replace")
    assert log.count("rate limits counted per server process") == 1
    assert "Traceback" not in log
