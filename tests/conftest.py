"""Suite-wide fixtures and the rule that service-backed tests never skip in CI.

Tests marked `postgres`, `redis`, `browser` or `nginx` need a real PostgreSQL, Redis,
Chromium or nginx. On a developer's machine without one they are skipped with the
reason; in CI (`CI=true`, set by `.ci/run`) a missing service fails them.

`make test` runs the suite in parallel processes (pytest-xdist, one per core).
pytest-django gives each its own test database; each also gets a Redis
database and a channel-layer prefix of its own (`_redis_of_this_worker`), so
that one process's cache flush or board update never reaches another's.

`--clock=MOMENT` moves the wall clock (tests/clock.py).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.conf import settings

from tests.paths import ROOT

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
# The pytest-xdist process running this session ("gw0", "gw1", ...), or "" without xdist.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")

# Fixtures shared across folders, defined once.
# Fixtures every package of tests shares (players, clients, the pinned day, a
# loopback SMTP server), loaded once for the whole suite.
pytest_plugins = ["tests.fixtures", "tests.mailserver", "tests.counting", "tests.clock"]


def _missing_service(marker: str) -> str | None:
    """Why a test with this marker cannot run here, or None when it can."""
    available = {
        "postgres": settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql",
        "redis": bool(settings.REDIS_URL),
        "browser": bool(shutil.which("chromium") or shutil.which("chromium-browser")),
        "nginx": bool(shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")),
    }
    reasons = {
        "postgres": "needs PostgreSQL: set DATABASE_URL=postgres://...",
        "redis": "needs Redis: set REDIS_URL=redis://...",
        "browser": "needs Chromium: apt-get install chromium",
        "nginx": "needs nginx: apt-get install nginx-light",
    }
    return None if available[marker] else reasons[marker]


def pytest_configure(config: pytest.Config) -> None:
    # Test players' passwords are hashed with a fast hasher first (Django's own
    # advice for tests): the real one costs a third of a second per player, and
    # no test is about its strength. Set for the whole session, before any
    # test server process is forked, so that every process reads both kinds;
    # the real hashers stay listed after it.
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.MD5PasswordHasher",
        *settings.PASSWORD_HASHERS,
    ]
    _redis_of_this_worker()
    _flush_by_delete()
    # The suite shares its machine: heavy work at a lower priority could starve
    # behind the other test processes. Its effect is measured by bench/abuse.py.
    settings.HEAVY_WORK_NICENESS = 0


def _flush_by_delete() -> None:
    """Empty the tables after each test that commits with DELETE, not TRUNCATE.

    pytest-django empties the database after every transactional test (the
    socket, browser and server tests) with Django's `flush`: on PostgreSQL one
    TRUNCATE of every table, which makes new files for each table and index,
    0.12 s on an idle machine and 0.27 s at the median in CI, for tables that
    hold a few rows. DELETE empties them in a tenth of that. The foreign keys
    Django makes are deferred to the commit, so the order of the tables does
    not matter within the flush's transaction; sequences are left as they are,
    as Django's flush leaves them.
    """
    from django.db.backends.postgresql.operations import DatabaseOperations

    truncate = DatabaseOperations.sql_flush

    def sql_flush(
        self: DatabaseOperations,
        style: Any,
        tables: Any,
        *,
        reset_sequences: bool = False,
        allow_cascade: bool = False,
    ) -> list[str]:
        if reset_sequences or allow_cascade or not tables:
            return truncate(
                self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        deletes = [f"DELETE FROM {self.quote_name(table)};" for table in tables]
        return ["SET CONSTRAINTS ALL DEFERRED;", *deletes]

    DatabaseOperations.sql_flush = sql_flush  # type: ignore[method-assign]


def _redis_of_this_worker() -> None:
    """Under pytest-xdist, worker N uses Redis database (REDIS_URL's + N) and the
    channel-layer prefix `asgi-gwN`: Redis pub/sub is shared by all its databases,
    so the prefix is what keeps one worker's board updates from another's sockets.
    Set before any cache or layer is opened and any test server is forked; the
    environment variable is changed too, for the servers that read it again."""
    if not WORKER or not settings.REDIS_URL:
        return
    url = urlsplit(settings.REDIS_URL)
    database = int(url.path.strip("/") or 0) + int(WORKER.removeprefix("gw"))
    if database > 15:  # Redis' default number of databases
        raise pytest.UsageError(
            f"worker {WORKER} would use Redis database {database}: set REDIS_URL to a lower "
            "database number or run fewer workers (make test TEST_WORKERS=N)"
        )
    settings.REDIS_URL = os.environ["REDIS_URL"] = urlunsplit(url._replace(path=f"/{database}"))
    settings.CACHES["default"]["LOCATION"] = settings.REDIS_URL
    # The tests' evictable cache and board mirror live in the worker's database too.
    os.environ.pop("CACHE_REDIS_URL", None)
    settings.CACHE_REDIS_URL = settings.CACHES["evictable"]["LOCATION"] = settings.REDIS_URL
    layer = settings.CHANNEL_LAYERS["default"]["CONFIG"]
    layer["hosts"] = [settings.REDIS_URL]
    layer["prefix"] = f"asgi-{WORKER}"


# The slowest files (a browser, a server of their own, the fuzzer, the solver),
# started first: under xdist (`--dist=loadfile`) each file runs whole on one
# worker, so a long file taken last would leave the other workers idle at the
# end. `make test` in CI prints the slowest tests (--durations).
SLOW_FIRST = (
    "tests/web/test_layout.py",
    "tests/security/test_schema_fuzz.py",
    "tests/docs/test_readme.py",
    "tests/web/test_browser",
    "tests/deploy/",
    "tests/web/",
    "tests/leaderboards/test_consumers.py",
    "tests/games/solver/",
)


def _slow_first(item: pytest.Item) -> int:
    path = Path(str(item.path)).relative_to(ROOT).as_posix()
    return next(
        (rank for rank, prefix in enumerate(SLOW_FIRST) if path.startswith(prefix)),
        len(SLOW_FIRST),
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=_slow_first)  # stable: each file's tests keep their order
    for item in items:
        for marker in ("postgres", "redis", "browser", "nginx"):
            if item.get_closest_marker(marker) is None:
                continue
            reason = _missing_service(marker)
            if reason is None:
                continue
            if IN_CI:
                item.add_marker(pytest.mark.usefixtures("_fail_missing_service"))
                item.user_properties.append(("missing_service", reason))
            else:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def _fail_missing_service(request: pytest.FixtureRequest) -> None:
    reasons = [value for key, value in request.node.user_properties if key == "missing_service"]
    pytest.fail(f"CI must run this test for real, but it {'; '.join(reasons)}")


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> None:
    """Start every test with empty rate-limit counters.

    Throttle counters live in the default cache (and, while it is away, in
    the process), which outlive a single test; without this, a suite that
    signs up many players from one test client would start hitting 429s
    part-way through.
    """
    import contextlib

    from django.core.cache import caches
    from redis.exceptions import RedisError

    from easyharp_site.throttling import local_counters_clear

    local_counters_clear()
    # A missing Redis is reported by the `redis` marker, not here; any other
    # error is a fault of the test setup, and fails the test.
    with contextlib.suppress(RedisError, OSError):
        for each in caches.all(initialized_only=False):
            each.clear()


@pytest.fixture(autouse=True)
def _board_mirror_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """Start every test with the board mirror's per-process state fresh: no pause
    after a Redis call that failed in an earlier test, and no day to drop."""
    from leaderboards import mirror

    monkeypatch.setattr(mirror, "_untrusted", set())
    monkeypatch.setattr(mirror, "_paused_until", 0.0)


@pytest.fixture(autouse=True)
def _daily_deals_without_the_solver(settings: Any) -> None:
    """Choose deals of the day without running the solver (about a second per deal).

    Tests of the solver check itself turn `DAILY_DEAL_REQUIRE_WIN` back on.
    """
    settings.DAILY_DEAL_REQUIRE_WIN = False
