"""Work for the heavy work pool: a job that holds a process until a test lets it go,
and one that notes when it ran."""

from __future__ import annotations

import os
import time
from pathlib import Path


def held_until(*, path: str) -> str:
    """Hold a pool process until the file `path` exists (a test creates it)."""
    deadline = time.monotonic() + 120
    while not Path(path).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return "released"


def written(*, path: str, word: str) -> str:
    """Add `word` as a line of the file `path`: the order in which the pool ran jobs."""
    with Path(path).open("a") as file:
        file.write(word + "\n")
    return word


def died() -> None:
    """End the pool process running it at once, as a kill or running out of memory would."""
    os._exit(1)
