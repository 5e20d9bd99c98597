"""The ASGI server the benches start: uvicorn with the flags of production
(docker-compose.yml's web service), on a loopback port."""

from __future__ import annotations

import sys

APP = "easyharp_site.asgi:application"
MAX_MESSAGE = 65536  # compose's --ws-max-size

# As in docker-compose.yml, less the logging a bench does not read.
UVICORN_FLAGS = ["--ws-max-size", str(MAX_MESSAGE), "--ws-per-message-deflate", "false"]
UVICORN_FLAGS += ["--lifespan", "on", "--no-access-log", "--log-level", "warning"]
UVICORN_FLAGS += ["--http", "h11", "--loop", "uvloop"]
# As in compose with FORWARDED_ALLOW_IPS unset: no proxy is trusted. (uvicorn
# on its own trusts X-Forwarded-For from 127.0.0.1, where the bench's clients
# are: a forged address would pass every per-address limit.)
UVICORN_FLAGS += ["--proxy-headers", "--forwarded-allow-ips="]


def uvicorn_command(
    port: int, *, app: str = APP, ws: str = "websockets-sansio", workers: int = 1
) -> list[str]:
    """The command line of `workers` uvicorn processes sharing loopback `port`."""
    return [
        sys.executable, "-m", "uvicorn", "--host", "127.0.0.1", "--port", str(port),
        "--ws", ws, *UVICORN_FLAGS, "--workers", str(workers), app,
    ]  # fmt: skip
