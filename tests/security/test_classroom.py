"""The players of one school or office, behind one address, are all served: the
fair share of a server process per address (`easyharp_site.fairness`) holds back
only the heavy routes, never the pages of a classroom that opens them at once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from django.test import override_settings

from easyharp_site.asgi import application
from easyharp_site.middleware import Message

SCHOOL = "198.51.100.30"
CLASSROOM = 80


async def get(path: str, address: str) -> tuple[int, bytes]:
    """One GET through the whole ASGI application, as the server hands it over."""
    scope: dict[str, Any] = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
        "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
        "root_path": "", "headers": [(b"host", b"testserver")],
        "client": (address, 50000), "server": ("testserver", 80),
    }  # fmt: skip
    sent: list[Message] = []
    bodies = [{"type": "http.request", "body": b"", "more_body": False}]
    done = asyncio.Event()

    async def receive() -> Message:
        if bodies:
            return bodies.pop()
        await done.wait()  # the client stays until the answer is sent
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    await application(scope, receive, send)
    done.set()
    body = b"".join(message.get("body", b"") for message in sent[1:])
    return sent[0]["status"], body


@pytest.mark.django_db(transaction=True)
@override_settings(
    REQUEST_CONCURRENCY_PER_ADDRESS=4, REQUEST_QUEUE_PER_ADDRESS=64, REQUEST_QUEUE_SECONDS=2
)
async def test_eighty_home_pages_loaded_at_once_from_one_address_are_all_served(
    daily: Any,
) -> None:
    answers = await asyncio.gather(*(get("/", SCHOOL) for _ in range(CLASSROOM)))

    assert [status for status, _ in answers] == [200] * CLASSROOM
    assert all(b"<html" in body for _, body in answers)
