"""A real server for tests that talk to one over the network: daphne in a subprocess.

Each server gets its own SQLite database, is migrated, has the days asked for
prepared (reads never create a day), listens on a free loopback port and is
stopped when the `with` block ends.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DAPHNE = Path(sys.executable).parent / "daphne"


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


@contextmanager
def daphne(
    env: Mapping[str, str], *, days: Sequence[str] = (), daphne_args: Sequence[str] = ()
) -> Iterator[str]:
    """A migrated daphne serving the project on `host:port`, with `days` (YYYY-MM-DD) prepared."""
    manage(env, "migrate", "--noinput")
    for day in days:
        manage(env, "prepare_daily_deals", "--start", day, "--days", "1")
    port = free_port()
    process = subprocess.Popen(
        [str(DAPHNE), "--bind", "127.0.0.1", "--port", str(port), *daphne_args,
         "easyharp_site.asgi:application"],
        cwd=ROOT, env=dict(env), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("daphne did not start") from None
                time.sleep(0.2)
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)
