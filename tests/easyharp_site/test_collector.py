"""The server's garbage collector makes its full passes on a timer, none by count, and
a pass of the young generations every second however the counts stand."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from easyharp_site import collector, lifespan
from easyharp_site.collector import passes_on_a_timer


def _passes_of(generation: int) -> Iterator[list[str]]:
    """The threads that made each pass of `generation` from now on; the collector's
    settings back after."""
    threshold = gc.get_threshold()
    names: list[str] = []

    def seen(phase: str, info: dict[str, Any]) -> None:
        if phase == "stop" and info["generation"] == generation:
            names.append(threading.current_thread().name)

    gc.callbacks.append(seen)
    yield names
    gc.callbacks.remove(seen)
    gc.set_threshold(*threshold)
    gc.unfreeze()


@pytest.fixture
def full_passes() -> Iterator[list[str]]:
    yield from _passes_of(2)


@pytest.fixture
def young_passes() -> Iterator[list[str]]:
    yield from _passes_of(1)


def test_many_promoted_objects_start_no_full_pass(full_passes: list[str]) -> None:
    stop = threading.Event()
    thread = passes_on_a_timer(every=60, young_every=60, stop=stop)
    try:
        young, middle, _ = gc.get_threshold()
        before = gc.get_stats()[1]["collections"]
        # Long-lived objects by the hundred thousand, as open sockets make them:
        # by count, they would have started full passes.
        kept = [[index] for index in range(20 * young * middle)]
        assert gc.get_stats()[1]["collections"] - before >= 10, "middle passes still run"
        assert threading.current_thread().name not in full_passes
        del kept
    finally:
        stop.set()
        thread.join()


def test_the_timer_makes_the_full_passes(full_passes: list[str]) -> None:
    stop = threading.Event()
    thread = passes_on_a_timer(every=0.05, young_every=0.01, stop=stop)
    try:
        deadline = time.monotonic() + 30
        while "gc-passes" not in full_passes and time.monotonic() < deadline:
            time.sleep(0.01)
        assert "gc-passes" in full_passes
    finally:
        stop.set()
        thread.join()
    assert not thread.is_alive()


def test_the_timer_makes_young_passes_that_no_count_started(young_passes: list[str]) -> None:
    stop = threading.Event()
    thread = passes_on_a_timer(every=60, young_every=0.01, stop=stop)
    try:
        # Nothing here allocates enough to start a pass by count: the timer's thread
        # makes them.
        deadline = time.monotonic() + 30
        while young_passes.count("gc-passes") < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert young_passes.count("gc-passes") >= 3
    finally:
        stop.set()
        thread.join()


def _lifespan(monkeypatch: pytest.MonkeyPatch, version: tuple[int, int]) -> list[threading.Event]:
    """Run the server's lifespan (startup, then shutdown) on Python `version`; the stop
    events of the timers it started."""
    started: list[threading.Event] = []

    def timer(*, stop: threading.Event) -> None:
        started.append(stop)

    monkeypatch.setattr(collector, "passes_on_a_timer", timer)
    monkeypatch.setattr(collector.sys, "version_info", (*version, 0, "final", 0))
    messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
    sent: list[str] = []

    async def receive() -> dict[str, str]:
        return next(messages)

    async def send(message: dict[str, str]) -> None:
        sent.append(message["type"])

    asyncio.run(lifespan.server_lifespan({"type": "lifespan"}, receive, send))
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    return started


def test_the_server_starts_the_timer_on_a_measured_python(monkeypatch: pytest.MonkeyPatch) -> None:
    (stop,) = _lifespan(monkeypatch, (3, 11))
    assert stop.is_set()  # stopped with the server


def test_no_timer_on_a_python_it_was_not_measured_on(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _lifespan(monkeypatch, (3, 14)) == []


def test_importing_the_application_starts_no_timer() -> None:
    import subprocess
    import sys

    code = (
        "import threading, easyharp_site.asgi;"
        "print(any(t.name == 'gc-passes' for t in threading.enumerate()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
