"""Each client address gets a fair share of a server process (`easyharp_site.fairness`).

The gate is tested around a stand-in application whose requests finish only
when the test lets them, so "at once" is exact: no timing is guessed.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest
from django.test import override_settings

from easyharp_site.fairness import FairShareMiddleware
from easyharp_site.middleware import Message, Scope

LIMIT = 2


class HeldApp:
    """An ASGI app whose requests run until released, recording who runs at once."""

    def __init__(self) -> None:
        self.running: list[str] = []
        self.most_at_once: dict[str, int] = {}
        self.release: dict[str, asyncio.Event] = {}
        self.started = asyncio.Condition()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        name = scope["path"]
        address = scope["client"][0]
        async with self.started:
            self.running.append(address)
            count = self.running.count(address)
            self.most_at_once[address] = max(self.most_at_once.get(address, 0), count)
            self.started.notify_all()
        try:
            await self.release.setdefault(name, asyncio.Event()).wait()
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})
        finally:
            self.running.remove(address)

    async def until_running(self, count: int) -> None:
        async with self.started:
            await self.started.wait_for(lambda: len(self.running) >= count)

    def let_go(self, name: str) -> None:
        self.release.setdefault(name, asyncio.Event()).set()


async def request(gate: FairShareMiddleware, path: str, address: str) -> tuple[int, dict[str, Any]]:
    """One HTTP request through the gate: (status, JSON body or {})."""
    scope = {"type": "http", "path": path, "client": (address, 50000), "headers": []}
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    await gate(scope, receive, send)
    body = sent[1]["body"]
    headers = dict(sent[0]["headers"])
    if sent[0]["status"] == 429:
        assert headers[b"retry-after"] == b"1"
        return 429, json.loads(body)
    return sent[0]["status"], {}


@override_settings(
    REQUEST_CONCURRENCY_PER_ADDRESS=LIMIT, REQUEST_QUEUE_PER_ADDRESS=10, REQUEST_QUEUE_SECONDS=30
)
async def test_one_address_runs_at_most_the_limit_and_the_rest_wait_in_order() -> None:
    app = HeldApp()
    gate = FairShareMiddleware(app)
    tasks = [asyncio.create_task(request(gate, f"/cards/r{i}/", "198.51.100.7")) for i in range(6)]
    await app.until_running(LIMIT)
    await asyncio.sleep(0)  # give the others every chance to start (they must not)
    assert len(app.running) == LIMIT
    # Another address is not held up by that line.
    other = asyncio.create_task(request(gate, "/cards/other/", "203.0.113.9"))
    await app.until_running(LIMIT + 1)
    app.let_go("/cards/other/")
    assert await other == (200, {})
    for i in range(6):
        app.let_go(f"/cards/r{i}/")
    assert [status for status, _ in await asyncio.gather(*tasks)] == [200] * 6
    assert app.most_at_once == {"198.51.100.7": LIMIT, "203.0.113.9": 1}
    assert gate.lines == {}  # nothing kept for addresses with nothing under way


@override_settings(
    REQUEST_CONCURRENCY_PER_ADDRESS=LIMIT, REQUEST_QUEUE_PER_ADDRESS=2, REQUEST_QUEUE_SECONDS=30
)
async def test_a_full_line_is_refused_at_once_with_a_429() -> None:
    app = HeldApp()
    gate = FairShareMiddleware(app)
    held = [asyncio.create_task(request(gate, f"/cards/r{i}/", "198.51.100.7")) for i in range(4)]
    await app.until_running(LIMIT)
    status, body = await request(gate, "/cards/one-too-many/", "198.51.100.7")
    assert status == 429
    assert body["error"]["code"] == "too_many_at_once"
    assert body["error"]["wait"] == 1
    for i in range(4):
        app.let_go(f"/cards/r{i}/")
    assert [status for status, _ in await asyncio.gather(*held)] == [200] * 4


@override_settings(
    REQUEST_CONCURRENCY_PER_ADDRESS=1, REQUEST_QUEUE_PER_ADDRESS=10, REQUEST_QUEUE_SECONDS=0.05
)
async def test_a_request_that_waited_too_long_is_refused_and_leaves_the_line() -> None:
    app = HeldApp()
    gate = FairShareMiddleware(app)
    first = asyncio.create_task(request(gate, "/cards/slow/", "198.51.100.7"))
    await app.until_running(1)
    status, _ = await request(gate, "/cards/waits/", "198.51.100.7")
    assert status == 429
    assert len(gate.lines["198.51.100.7"].waiting) == 0
    app.let_go("/cards/slow/")
    assert await first == (200, {})
    assert gate.lines == {}


@override_settings(
    REQUEST_CONCURRENCY_PER_ADDRESS=1, REQUEST_QUEUE_PER_ADDRESS=10, REQUEST_QUEUE_SECONDS=30
)
async def test_a_waiting_request_cancelled_gives_its_place_back() -> None:
    app = HeldApp()
    gate = FairShareMiddleware(app)
    first = asyncio.create_task(request(gate, "/cards/slow/", "198.51.100.7"))
    await app.until_running(1)
    gone = asyncio.create_task(request(gate, "/cards/gone/", "198.51.100.7"))
    third = asyncio.create_task(request(gate, "/cards/third/", "198.51.100.7"))
    while len(gate.lines["198.51.100.7"].waiting) < 2:
        await asyncio.sleep(0)
    gone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone
    app.let_go("/cards/slow/")
    app.let_go("/cards/third/")
    assert await first == (200, {})
    assert await third == (200, {})
    assert gate.lines == {}


@override_settings(
    REQUEST_CONCURRENCY_PER_ADDRESS=1, REQUEST_QUEUE_PER_ADDRESS=0, REQUEST_QUEUE_SECONDS=30
)
@pytest.mark.parametrize(
    "path", ["/", "/api/days/today/", "/replays/12/", "/static/games/site.css", "/healthz/"]
)
async def test_pages_ordinary_reads_static_files_and_the_health_check_are_not_counted(
    path: str,
) -> None:
    app = HeldApp()
    gate = FairShareMiddleware(app)
    busy = asyncio.create_task(request(gate, "/cards/slow/", "198.51.100.7"))
    await app.until_running(1)
    app.let_go(path)
    assert await request(gate, path, "198.51.100.7") == (200, {})
    app.let_go("/cards/slow/")
    await busy


@override_settings(
    REQUEST_CONCURRENCY_PER_ADDRESS=1, REQUEST_QUEUE_PER_ADDRESS=0, REQUEST_QUEUE_SECONDS=30
)
@pytest.mark.parametrize(
    "path", ["/api/hint/", "/api/games/12/replay/", "/cards/games/12.png", "/cards/days/x.png"]
)
async def test_hints_replays_and_share_pictures_are_counted(path: str) -> None:
    app = HeldApp()
    gate = FairShareMiddleware(app)
    busy = asyncio.create_task(request(gate, "/cards/slow/", "198.51.100.7"))
    await app.until_running(1)
    assert (await request(gate, path, "198.51.100.7"))[0] == 429
    app.let_go("/cards/slow/")
    await busy


@override_settings(
    REQUEST_CONCURRENCY_PER_ADDRESS=1, REQUEST_QUEUE_PER_ADDRESS=0, REQUEST_QUEUE_SECONDS=30
)
async def test_addresses_of_one_ipv6_block_share_a_line() -> None:
    app = HeldApp()
    gate = FairShareMiddleware(app)
    busy = asyncio.create_task(request(gate, "/cards/slow/", "2001:db8:1:2::1"))
    await app.until_running(1)
    assert (await request(gate, "/cards/next/", "2001:db8:1:2::ffff"))[0] == 429
    app.let_go("/cards/elsewhere/")
    assert await request(gate, "/cards/elsewhere/", "2001:db8:1:3::1") == (200, {})
    app.let_go("/cards/slow/")
    await busy


async def test_websockets_pass_untouched() -> None:
    seen: list[str] = []

    async def app(scope: Scope, receive: Any, send: Any) -> None:
        seen.append(scope["type"])

    await FairShareMiddleware(app)({"type": "websocket", "path": "/ws/x/"}, None, None)
    assert seen == ["websocket"]


@override_settings(
    REQUEST_CONCURRENCY_PER_ADDRESS=1, REQUEST_QUEUE_PER_ADDRESS=10, REQUEST_QUEUE_SECONDS=30
)
async def test_a_request_waiting_on_another_process_lends_its_turn() -> None:
    """A view waiting on the heavy-work pool (`games.pool.heavy_wait`) lets the next
    request of its address run, then takes a turn back ahead of the line."""
    from asgiref.sync import sync_to_async

    from easyharp_site.fairness import turn_lent

    work_done = threading.Event()
    lending = threading.Event()
    order: list[str] = []

    def wait_for_work() -> None:
        with turn_lent():
            lending.set()
            work_done.wait(timeout=30)
        order.append("heavy took its turn back")

    async def app(scope: Scope, receive: Any, send: Any) -> None:
        if scope["path"] == "/cards/heavy/":
            await sync_to_async(wait_for_work)()
        else:
            order.append(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    gate = FairShareMiddleware(app)
    heavy = asyncio.create_task(request(gate, "/cards/heavy/", "198.51.100.7"))
    await asyncio.to_thread(lending.wait, 30)
    # The limit is 1 and the heavy request is under way, yet this one runs.
    assert await request(gate, "/cards/light/", "198.51.100.7") == (200, {})
    assert order == ["/cards/light/"]
    work_done.set()
    assert await heavy == (200, {})
    assert order == ["/cards/light/", "heavy took its turn back"]
    assert gate.lines == {}
