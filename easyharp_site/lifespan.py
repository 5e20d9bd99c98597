"""The ASGI lifespan of a server process: what starts with the server and stops with it.

Only a server that sends lifespan events runs it (uvicorn with `--lifespan=on`,
as compose and the image run it); an import of the application (a test, a
command) starts nothing.

- startup: the collector's passes go on a timer (`easyharp_site.collector`,
  on the Python versions it was measured on), and the event loop's
  connection pool opens (`easyharp_site.loop_pool`, PostgreSQL);
- shutdown: the timer stops and the event loop's connection pool closes
  (`easyharp_site.loop_pool`).
"""

from __future__ import annotations

import threading
from typing import Any

from easyharp_site import collector, loop_pool


async def server_lifespan(scope: dict[str, Any], receive: Any, send: Any) -> None:
    stop = threading.Event()
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            collector.passes_on_a_timer_where_measured(stop)
            await loop_pool.open_pool()
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            stop.set()
            await loop_pool.close()
            await send({"type": "lifespan.shutdown.complete"})
            return
