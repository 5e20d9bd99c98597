"""Container health check: GET /healthz/ on the local server, as one of ALLOWED_HOSTS.

Exit 0 when it answers 200 (the database answers too), 1 otherwise. The Host
header is taken from ALLOWED_HOSTS so the check passes Django's host
validation in production, where localhost is usually not allowed.
"""

import os
import sys
import urllib.request


def host() -> str:
    first = os.environ.get("ALLOWED_HOSTS", "localhost").split(",")[0].strip()
    # ".example.com" allows subdomains and "*" anything: both stand for a real name.
    if first in {"", "*"}:
        return "localhost"
    return first.lstrip(".")


def main() -> int:
    request = urllib.request.Request("http://127.0.0.1:8000/healthz/", headers={"Host": host()})
    try:
        with urllib.request.urlopen(request, timeout=4) as response:
            return 0 if response.status == 200 else 1
    except OSError:
        return 1


if __name__ == "__main__":
    sys.exit(main())
