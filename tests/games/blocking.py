"""Work for the heavy work pool that holds a process until a test lets it go."""

from __future__ import annotations

import time
from pathlib import Path


def held_until(*, path: str) -> str:
    """Hold a pool process until the file `path` exists (a test creates it)."""
    deadline = time.monotonic() + 120
    while not Path(path).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return "released"
