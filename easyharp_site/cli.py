"""The `easyharp` command: the service run from its installed wheel, with no checkout.

Settings come from the environment, as for manage.py. Before that, the file
EASYHARP_ENV_FILE names is read (NAME=value lines, as in .env.example), or else
`.env` in the working directory if there is one; a variable already in the
environment wins over the file's.
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping, Sequence
from pathlib import Path

USAGE = """usage:
    easyharp web [uvicorn options]   the ASGI server, with production's flags
    easyharp worker                  the job worker (manage.py qcluster)
    easyharp migrate                 manage.py migrate --noinput
    easyharp check                   manage.py check --deploy --fail-level WARNING
    easyharp [manage] COMMAND ...    any other management command (collectstatic,
                                     prepare_daily_deals, check_boards, help, ...)"""

APPLICATION = "easyharp_site.asgi:application"

# The ASGI server's flags in production, wherever it runs (docker-compose.yml,
# deploy/systemd). The address comes from WEB_HOST and WEB_PORT; uvicorn itself
# reads the number of processes sharing the port from WEB_CONCURRENCY, and the
# proxies whose X-Forwarded-* it believes from FORWARDED_ALLOW_IPS. Options
# given on the command line come after these, so they win.
SERVER_FLAGS = (
    # Client addresses (rate limits) and scheme from X-Forwarded-For and
    # X-Forwarded-Proto, but only on connections from the proxies listed in
    # FORWARDED_ALLOW_IPS; from anyone else the headers are ignored. uvicorn
    # takes the nearest address that is not a listed proxy, so an address a
    # client writes into the header itself is never taken.
    "--proxy-headers",
    # The websockets package's sans-I/O protocol: the live boards write each
    # update, framed once, straight to every socket's transport
    # (easyharp_site/compat.py, FrameWriter; docs/PERFORMANCE.md).
    "--ws=websockets-sansio",
    # Refuse websocket frames and messages over 64 KiB at the server (clients
    # send only tiny pings); uvicorn's default is 16 MiB.
    "--ws-max-size=65536",
    # No compression: a compressing socket keeps a zlib state of its own and
    # compresses every update again, per socket.
    "--ws-per-message-deflate=false",
    "--http=h11",
    # libuv's event loop (uvloop): thousands of sockets answered sooner.
    "--loop=uvloop",
    # The lifespan's startup puts the collector's passes on a timer (easyharp_site.collector).
    "--lifespan=on",
)

# The commands that are more than a management command's name.
SHORTHANDS = {
    "worker": ["qcluster"],
    "migrate": ["migrate", "--noinput"],
    "check": ["check", "--deploy", "--fail-level", "WARNING"],
}


def read_env_file(path: Path) -> dict[str, str]:
    """The NAME=value lines of an env file (`#` comments and blank lines skipped,
    a value in matching quotes taken without them); a line of any other form is
    an error naming the file and line."""
    values = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, equals, value = line.removeprefix("export ").partition("=")
        name, value = name.strip(), value.strip()
        if not equals or not name.isidentifier():
            raise SystemExit(f"easyharp: {path}, line {number}: not NAME=value: {line}")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[name] = value
    return values


def load_env_file(environ: MutableMapping[str, str]) -> Path | None:
    """Read EASYHARP_ENV_FILE (or `.env` in the working directory) into `environ`,
    under the variables already set; the file read, if any."""
    named = environ.get("EASYHARP_ENV_FILE", "")
    path = Path(named) if named else Path(".env")
    if not path.is_file():
        if named:
            raise SystemExit(f"easyharp: EASYHARP_ENV_FILE={named}: no such file")
        return None
    for name, value in read_env_file(path).items():
        environ.setdefault(name, value)
    return path


def web(options: Sequence[str]) -> None:
    """Serve the site with uvicorn and production's flags, then `options`."""
    import uvicorn.main
    from django.conf import settings

    address = [f"--host={settings.WEB_HOST}", f"--port={settings.WEB_PORT}"]
    uvicorn.main.main([APPLICATION, *address, *SERVER_FLAGS, *options], prog_name="easyharp web")


def main(argv: Sequence[str] | None = None) -> None:
    """The console script's entry point (pyproject.toml's `easyharp`)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in {"-h", "--help"}:
        print(USAGE, file=sys.stdout if args else sys.stderr)
        raise SystemExit(0 if args else 2)
    load_env_file(os.environ)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "easyharp_site.settings")
    command, rest = args[0], args[1:]
    if command == "web":
        web(rest)
        return
    if command == "manage":
        command, rest = (rest[0], rest[1:]) if rest else ("help", [])

    from django.core.management import execute_from_command_line

    execute_from_command_line(["easyharp", *SHORTHANDS.get(command, [command]), *rest])
