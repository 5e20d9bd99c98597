"""Real servers for tests that talk to one over the network: uvicorn as in production.

The server runs with the command line of docker-compose.yml's web service
(`production_command`, `easyharp web`'s), on a free loopback port: the same websocket caps,
protocol, proxy-header rule and frame writer as in production. `uvicorn()`
runs it in a subprocess, on its own SQLite database, migrated, with the days
asked for prepared (reads never create a day), stopped when the `with` block
ends; `UvicornProcess` forks one serving an application object (the browser
tests' test database).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
UVICORN = Path(sys.executable).parent / "uvicorn"
APP = "easyharp_site.asgi:application"


def production_command() -> list[str]:
    """docker-compose.yml's web command as uvicorn runs it: `easyharp web`'s flags
    (easyharp_site/cli.py), then the service's own, each `${VAR:-default}` at its default."""
    from easyharp_site.cli import APPLICATION, SERVER_FLAGS

    compose = (ROOT / "docker-compose.yml").read_text()
    web = compose.split("\n  web:\n", 1)[1]
    block = web.split("    command:\n", 1)[1]
    command = []
    for line in block.splitlines():
        if line.startswith("      #"):
            continue
        if not line.startswith("      - "):
            break
        command.append(re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", line.removeprefix("      - ")))
    assert command[:2] == ["easyharp", "web"], command
    return ["uvicorn", APPLICATION, *SERVER_FLAGS, *command[2:]]


def server_flags(port: int, extra: Sequence[str] = ()) -> list[str]:
    """The production flags for one process on loopback `port`, then `extra` (which win)."""
    flags = [
        flag
        for flag in production_command()[2:]
        if not flag.startswith(("--host=", "--port=", "--workers="))
    ]
    return [*flags, "--host=127.0.0.1", f"--port={port}", "--workers=1", *extra]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def server_env(database: Path, **overrides: str) -> dict[str, str]:
    """This process's environment on a fresh SQLite file, without the suite's services."""
    env = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "DATABASE_URL"}}
    env.update(
        {
            "DATABASE_URL": f"sqlite:///{database}",
            "DAILY_DEAL_REQUIRE_WIN": "false",
            "DJANGO_SETTINGS_MODULE": "easyharp_site.settings",
        }
    )
    env.update(overrides)
    return env


def manage(env: Mapping[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`python manage.py ARGS` in the project with `env`; raises with its output on failure."""
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=300,
    )
    if result.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stdout}{result.stderr}")
    return result


def process_group_gone(group: int) -> bool:
    """Whether no process of process group `group` is left."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return True
    return False


def processes_with(*texts: str, where: str = "cmdline") -> list[int]:
    """The ids of this machine's processes whose command line (or, with `where`
    "environ", environment) holds each of `texts` (its arguments are separate)."""
    found = []
    for folder in Path("/proc").iterdir():
        if not folder.name.isdigit():
            continue
        try:
            content = (folder / where).read_bytes()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if all(text.encode() in content for text in texts):
            found.append(int(folder.name))
    return found


def wait_for_port(port: int, process: subprocess.Popen[Any], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("the server did not start") from None
            time.sleep(0.2)


@contextmanager
def uvicorn(
    env: Mapping[str, str],
    *,
    days: Sequence[str] = (),
    app: str = APP,
    server_args: Sequence[str] = (),
    stderr: Any = subprocess.PIPE,
) -> Iterator[str]:
    """A migrated server of `app` on `host:port`, with `days` (YYYY-MM-DD) prepared."""
    manage(env, "migrate", "--noinput")
    for day in days:
        manage(env, "prepare_daily_deals", "--start", day, "--days", "1")
    port = free_port()
    process = subprocess.Popen(
        [str(UVICORN), app, *server_flags(port, server_args)],
        cwd=ROOT,
        env=dict(env),
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )
    try:
        wait_for_port(port, process)
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


class UvicornProcess(multiprocessing.get_context("fork").Process):  # type: ignore[misc]
    """A forked child serving `get_application()` with the production flags on a free port.

    `setup` runs first in the child (to drop what it must not share with the
    parent); `ready` is set once it listens, on `port.value`.
    """

    def __init__(
        self, get_application: Callable[[], Any], setup: Callable[[], None] | None = None
    ) -> None:
        # Not a daemon: the server starts the processes of its heavy-work pool
        # (games/pool.py), which a daemonic process may not; `serving` ends it.
        super().__init__(daemon=False)
        context = multiprocessing.get_context("fork")
        self.get_application, self.setup = get_application, setup
        self.ready = context.Event()
        self.port = context.Value("i", 0)

    def run(self) -> None:
        import uvicorn
        from uvicorn.main import main

        if self.setup is not None:
            self.setup()
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        options = main.make_context("uvicorn", [APP, *server_flags(port)]).params
        config = uvicorn.Config(
            self.get_application(),
            **{name: options[name] for name in CONFIG_OPTIONS},
        )
        server = uvicorn.Server(config)

        async def serve() -> None:
            serving = asyncio.create_task(server.serve())
            while not server.started and not serving.done():
                await asyncio.sleep(0.05)
            self.port.value = port
            self.ready.set()
            await serving

        asyncio.run(serve())


# The command-line options of production that `UvicornProcess` passes on.
CONFIG_OPTIONS = (
    "host",
    "port",
    "proxy_headers",
    "forwarded_allow_ips",
    "ws",
    "ws_max_size",
    "ws_per_message_deflate",
    "http",
    "lifespan",
)
