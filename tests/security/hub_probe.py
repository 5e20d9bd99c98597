"""The site's ASGI application with a window on the live-board hub, for tests
that run it under a real server (`tests.security.hub_probe:application`).

`GET /test-probe/hub/` answers `{"sockets", "boards", "framed"}`: what the hub
of the server's event loop holds, and how many of its sockets write their
updates through a frame writer. `?snapshot_delay=SECONDS` first makes every
board read wait that long, as a busy database would, so that sockets can be
caught while their consumer still reads its snapshot. `GET /test-probe/client/`
answers `{"client", "scheme", "cookies"}`: the client address and scheme the
server gave the request (after its proxy-header rule), and its Cookie headers.
Every other request goes to the site unchanged.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import parse_qs

from easyharp_site.asgi import application as site
from leaderboards import live

PATH = "/test-probe/hub/"
CLIENT_PATH = "/test-probe/client/"
_snapshot_delay = 0.0
_read = live.BoardHub.read


async def _delayed_read(self: live.BoardHub, *args: Any, **kwargs: Any) -> live.BoardView:
    if _snapshot_delay:
        await asyncio.sleep(_snapshot_delay)
    return await _read(self, *args, **kwargs)


live.BoardHub.read = _delayed_read  # type: ignore[method-assign]


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http" or scope["path"] not in {PATH, CLIENT_PATH}:
        await site(scope, receive, send)
        return
    if scope["path"] == CLIENT_PATH:
        cookies = [value.decode("latin1") for name, value in scope["headers"] if name == b"cookie"]
        await _answer(
            send, {"client": scope["client"][0], "scheme": scope["scheme"], "cookies": cookies}
        )
        return
    global _snapshot_delay
    query = parse_qs(scope.get("query_string", b"").decode())
    if "snapshot_delay" in query:
        _snapshot_delay = float(query["snapshot_delay"][-1])
    boards = live.BoardHub.current()._boards
    sockets = [socket for state in boards.values() for socket in state.sockets]
    await _answer(
        send,
        {
            "sockets": len(sockets),
            "boards": len(boards),
            "framed": sum(getattr(socket, "writer", None) is not None for socket in sockets),
        },
    )


async def _answer(send: Any, answer: dict[str, Any]) -> None:
    body = json.dumps(answer).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})
