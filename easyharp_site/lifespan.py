"""The ASGI lifespan of a server process: what starts with the server and stops with it.

Only a server that sends lifespan events runs it (uvicorn with `--lifespan=on`,
as compose and the image run it); an import of the application (a test, a
command) starts nothing.

- startup: the collector's passes go on a timer (`easyharp_site.collector`,
  on the Python versions it was measured on), and the event loop's
  connection pool opens (`easyharp_site.loop_pool`, PostgreSQL);
- shutdown (uvicorn has by then closed every socket with 1012, "service
  restart", and answered the requests under way): the timer stops, the writes
  of actions the closed sockets accepted finish (`easyharp_site.draining`, for
  up to `SHUTDOWN_WRITES_SECONDS`), then the event loop's connection pool
  closes (`easyharp_site.loop_pool`).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from easyharp_site import collector, draining, loop_pool

logger = logging.getLogger(__name__)

# How long a stopping process waits for the writes its closed sockets left under way.
SHUTDOWN_WRITES_SECONDS = 10.0


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
            if waiting := draining.writes_under_way():
                logger.info(
                    "Stopping once the writes of streamed actions under way end: %d", waiting
                )
                unfinished = await draining.writes_finish(SHUTDOWN_WRITES_SECONDS)
                if unfinished:
                    logger.error(
                        "Stopped with %d writes of streamed actions unfinished", unfinished
                    )
            await loop_pool.close()
            await send({"type": "lifespan.shutdown.complete"})
            return
