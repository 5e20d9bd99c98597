"""Container health check: GET /healthz/ on the local server, as one of ALLOWED_HOSTS.

Exit 0 when it answers 200 (the database answers too), 1 otherwise. The server
is asked where the settings say it listens (WEB_HOST and WEB_PORT; a server
listening on every address is asked on loopback). The Host header is taken
from ALLOWED_HOSTS so the check passes Django's host validation in
production, where localhost is usually not allowed.

Only the settings module is read (no app is loaded), so the check stays quick.
"""

import os
import sys
import urllib.request

# Listening on every address: the server is reached on loopback.
ANY_ADDRESS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}  # noqa: S104


def host(allowed_hosts: list[str]) -> str:
    first = allowed_hosts[0] if allowed_hosts else ""
    # ".example.com" allows subdomains and "*" anything: both stand for a real name.
    if first in {"", "*"}:
        return "localhost"
    return first.lstrip(".")


def url(web_host: str, web_port: int) -> str:
    address = ANY_ADDRESS.get(web_host, web_host)
    if ":" in address and not address.startswith("["):
        address = f"[{address}]"
    return f"http://{address}:{web_port}/healthz/"


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "easyharp_site.settings")
    from django.conf import settings

    try:
        target = url(settings.WEB_HOST, settings.WEB_PORT)
        request = urllib.request.Request(target, headers={"Host": host(settings.ALLOWED_HOSTS)})
    except Exception as error:  # noqa: BLE001 - settings that do not load: unhealthy, said why
        print(f"health check: {error}", file=sys.stderr)
        return 1
    try:
        with urllib.request.urlopen(request, timeout=4) as response:
            return 0 if response.status == 200 else 1
    except OSError as error:
        print(f"health check: {target}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
