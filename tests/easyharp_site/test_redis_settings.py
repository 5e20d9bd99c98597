"""Redis in two parts: what must stay (the channel layer, the limits, shared counts)
at REDIS_URL, and what may be evicted (built replays, drawn share pictures, the
board mirror) at CACHE_REDIS_URL, which defaults to REDIS_URL."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import caches

from tests.deploy.compose import services
from tests.fixtures import WIN_LOG, client_for, close_day, submit
from tests.security.test_deploy_settings import read_settings, run_django

KEPT = "redis://127.0.0.1:6379/3"
EVICTABLE = "redis://127.0.0.1:6380/0"
NAMES = ["REDIS_URL", "CACHE_REDIS_URL", "CACHES", "CHANNEL_LAYERS", "BOARD_MIRROR"]


def test_the_evictable_cache_is_the_redis_of_redis_url_unless_told_otherwise() -> None:
    read = read_settings({"REDIS_URL": KEPT}, NAMES)

    assert read["CACHE_REDIS_URL"] == KEPT
    assert read["CACHES"]["evictable"]["LOCATION"] == KEPT  # type: ignore[index]
    assert read["BOARD_MIRROR"] is True


def test_cache_redis_url_takes_the_evictable_cache_and_nothing_else() -> None:
    read = read_settings({"REDIS_URL": KEPT, "CACHE_REDIS_URL": EVICTABLE}, NAMES)

    caches_read: Any = read["CACHES"]
    layers: Any = read["CHANNEL_LAYERS"]
    assert caches_read["evictable"]["LOCATION"] == EVICTABLE
    assert caches_read["default"]["LOCATION"] == KEPT
    assert layers["default"]["CONFIG"]["hosts"] == [KEPT]


def test_cache_redis_url_without_redis_url_is_refused() -> None:
    code = "import django; django.setup()"
    result = run_django(
        ["-c", code],
        {"REDIS_URL": "", "CACHE_REDIS_URL": EVICTABLE,
         "DJANGO_SETTINGS_MODULE": "easyharp_site.settings"},
    )  # fmt: skip

    assert result.returncode != 0
    assert "CACHE_REDIS_URL needs REDIS_URL" in result.stderr


@pytest.mark.django_db
def test_a_built_replay_and_a_drawn_picture_are_kept_in_the_evictable_cache(
    alice: Any, daily: Any, settings: Any
) -> None:
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                    "LOCATION": "kept"},
        "evictable": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                      "LOCATION": "evictable-test"},
    }  # fmt: skip
    game = int(submit(client_for(alice), WIN_LOG[:12]).json()["id"])
    close_day(daily)

    replay = client_for(None).get(f"/api/games/{game}/replay/")
    card = client_for(None).get(f"/cards/games/{game}.png")

    assert replay.status_code == card.status_code == 200
    assert kinds("evictable") >= {"replay", "card"}
    assert not kinds("default") & {"replay", "card"}


def kinds(alias: str) -> set[str]:
    """What a local cache holds: the first word of each key (`:1:replay:...`)."""
    return {key.split(":")[2] for key in caches[alias]._cache}  # type: ignore[attr-defined]


def test_compose_caps_both_redis_and_lets_only_the_cache_evict() -> None:
    every = services()
    kept = " ".join(map(str, every["redis"]["command"]))
    evictable = " ".join(map(str, every["redis-cache"]["command"]))
    app: Any = every["web"]["environment"]

    assert "--maxmemory-policy noeviction" in kept and "--maxmemory " in kept
    assert "--maxmemory-policy allkeys-lru" in evictable and "--maxmemory " in evictable
    assert app["REDIS_URL"].startswith("redis://redis:")
    assert app["CACHE_REDIS_URL"].startswith("redis://redis-cache:")
    for name in ("web", "worker"):
        assert "redis-cache" in every[name]["depends_on"], name
