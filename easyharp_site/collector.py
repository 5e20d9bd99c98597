"""A server process's garbage collector: its full passes on a timer, not by count, and
a young pass every second.

Python's collector walks every tracked object of the oldest generation in a
full pass, and starts one after every ten passes of the middle generation
once enough objects were promoted. A server process holding thousands of
open sockets has about a million such objects: each full pass stopped the
whole process every few seconds while players streamed their actions, and
found nothing to free (docs/PERFORMANCE.md). Almost everything the process frees, reference counting
frees; the passes of the two young generations still run as before and free
the young cycles.

So, in a server process (from its ASGI lifespan's startup, `easyharp_site.lifespan`,
on the Python versions it was measured on): what was imported by then is frozen
(never walked again), the full passes by count are off, and a thread makes one
full pass every `FULL_PASS_SECONDS`. A cycle that became garbage after
reaching the oldest generation waits at most that long.

The same thread makes a pass of the two young generations every
`YOUNG_PASS_SECONDS`. The collector starts those passes by a count of
allocations less deallocations, and an old object freed counts against a new
one kept: while thousands of sockets replaced their old objects by new ones,
the youngest generation grew without a pass, and the pass that came at last
stopped the process (docs/PERFORMANCE.md).
"""

from __future__ import annotations

import gc
import sys
import threading
import time

# The collector of other versions differs (3.14's is incremental): measure it there first.
MEASURED_ON = frozenset({(3, 11)})

FULL_PASS_SECONDS = 300.0
YOUNG_PASS_SECONDS = 1.0

# Passes of the middle generation before a full pass by count: in practice never
# (a busy server makes about eight a second, and the timer's full pass every
# FULL_PASS_SECONDS starts the count again).
_FULL_PASS_AFTER = 1_000_000


def passes_on_a_timer(
    *,
    every: float = FULL_PASS_SECONDS,
    young_every: float = YOUNG_PASS_SECONDS,
    stop: threading.Event | None = None,
) -> threading.Thread:
    """Freeze what is alive now, turn the full passes by count off, and start the
    thread that makes one every `every` seconds, and a pass of the young
    generations every `young_every` (until `stop` is set)."""
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, _FULL_PASS_AFTER)
    stopping = stop or threading.Event()

    def collect_forever() -> None:
        last_full = time.monotonic()
        while not stopping.wait(young_every):
            if time.monotonic() - last_full >= every:
                gc.collect()
                last_full = time.monotonic()
            else:
                gc.collect(1)

    thread = threading.Thread(target=collect_forever, name="gc-passes", daemon=True)
    thread.start()
    return thread


def passes_on_a_timer_where_measured(stop: threading.Event) -> threading.Thread | None:
    """`passes_on_a_timer` on the Python versions of `MEASURED_ON` (until `stop` is
    set); nothing on another."""
    if sys.version_info[:2] not in MEASURED_ON:
        return None
    return passes_on_a_timer(stop=stop)
