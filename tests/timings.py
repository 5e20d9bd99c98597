"""When a person's actions reach the server, and when a script's do: the timings the
review's pace measures (`games.review`) are calibrated on, as docs/FAIR_PLAY.md
tells.

A person's play is drawn action by action: a move (a card chosen and moved)
takes a reaction and a decision, a tap of the stock or an undo much less, and
now and then the player stops to think. Each action then travels to the server
over a connection that keeps their order (a socket): it arrives a network delay
later, never before the one sent before it. The patterns add what happens to
people: a key held on the stock, a phone call, a page reloaded, the network
stalling. Seeded, so that a test's figures are the same on every run.
"""

from __future__ import annotations

import datetime
import math
import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from unittest import mock

from games.review import TAPS

# A move's time, for a quick player: a reaction (200 ms at least) and a decision,
# most of them under a second (the median), now and then a pause to think.
QUICK_MOVE_MIN_MS = 200
QUICK_MOVE_MEDIAN_MS = 650
# A tap of the stock or an undo: a finger's repeat, a quick player's double tap.
TAP_MIN_MS = 90
TAP_MEDIAN_MS = 180
# A key held on the stock repeats it this often (a browser's auto-repeat, 30 a second).
KEY_REPEAT_MS = 33
# The network's delay, one way: a phone on a mobile network at worst.
LATENCY_MS = (20, 300)
# Actions a socket takes in a millisecond when they come all at once (803 in 136 ms
# were measured through the attempt's socket).
SERVER_ACTIONS_PER_MS = 6


def _lognormal(rng: random.Random, median_ms: float, floor_ms: float, spread: float) -> int:
    return int(max(floor_ms, median_ms * math.exp(rng.gauss(0, spread))))


def played(
    log: Sequence[str],
    seed: int,
    *,
    move_median_ms: float = QUICK_MOVE_MEDIAN_MS,
    move_min_ms: float = QUICK_MOVE_MIN_MS,
    held_key: bool = False,
    start_ms: int = 3_000,
) -> list[int]:
    """When a person played each action of `log` (ms since the attempt's start)."""
    rng = random.Random(seed)
    times: list[int] = []
    at = start_ms
    for index, token in enumerate(log):
        if token in TAPS:
            repeat = held_key and index > 0 and log[index - 1] == token
            at += KEY_REPEAT_MS if repeat else _lognormal(rng, TAP_MEDIAN_MS, TAP_MIN_MS, 0.4)
        else:
            at += _lognormal(rng, move_median_ms, move_min_ms, 0.6)
            if rng.random() < 0.03:  # a pause to think
                at += rng.randint(3_000, 20_000)
        times.append(at)
    return times


def received(played_ms: Sequence[int], seed: int) -> list[int]:
    """When the server received each action played at `played_ms`, over a socket."""
    rng = random.Random(seed)
    arrivals: list[int] = []
    for at in played_ms:
        arrival = at + rng.randint(*LATENCY_MS)
        arrivals.append(max(arrival, arrivals[-1] if arrivals else 0))
    return arrivals


def stalled(arrivals: Sequence[int], *, at_action: int, stall_ms: int) -> list[int]:
    """`arrivals` with nothing received for `stall_ms` from action `at_action` on: what
    was played meanwhile arrives at once when it ends (a reload, a stalled connection),
    as fast as the server takes it (`SERVER_ACTIONS_PER_MS`)."""
    resumed = arrivals[at_action] + stall_ms
    caught_up: list[int] = []
    for index, time in enumerate(arrivals):
        if index >= at_action and time < resumed:
            time = resumed + (index - at_action) // SERVER_ACTIONS_PER_MS
        caught_up.append(max(time, caught_up[-1] if caught_up else 0))
    return caught_up


def paused(times: Sequence[int], *, at_action: int, pause_ms: int) -> list[int]:
    """`times` with the player away for `pause_ms` before action `at_action` (a call)."""
    return [time + pause_ms if index >= at_action else time for index, time in enumerate(times)]


def page_saves(
    played_ms: Sequence[int], *, every: int = 20, within_ms: int = 10_000
) -> list[list[int]]:
    """The saves (`[ms, actions]`) of the play page while its socket is down: after
    `every` new actions or `within_ms` after the first unsaved one, whichever is first."""
    saves: list[list[int]] = []
    first_unsaved: int | None = None
    saved = 0
    for count, at in enumerate(played_ms, start=1):
        if first_unsaved is not None and at - first_unsaved >= within_ms:
            saves.append([first_unsaved + within_ms, count - 1])
            saved, first_unsaved = count - 1, None
        if first_unsaved is None:
            first_unsaved = at
        if count - saved >= every:
            saves.append([at, count])
            saved, first_unsaved = count, None
    return saves


# Each honest pattern: the server's receive times of `log`'s actions, for a seed.
HONEST: dict[str, Callable[[Sequence[str], int], list[int]]] = {
    "quick player": lambda log, seed: received(played(log, seed), seed),
    "quickest player": lambda log, seed: received(
        played(log, seed, move_median_ms=400, move_min_ms=200), seed
    ),
    "key held on the stock": lambda log, seed: received(played(log, seed, held_key=True), seed),
    "slow thinker": lambda log, seed: received(
        played(log, seed, move_median_ms=5_000, move_min_ms=800), seed
    ),
    "phone call": lambda log, seed: paused(
        received(played(log, seed), seed), at_action=len(log) // 2, pause_ms=6 * 60_000
    ),
    "page reloaded": lambda log, seed: stalled(
        received(played(log, seed), seed), at_action=len(log) // 3, stall_ms=3_000
    ),
    "connection stalled": lambda log, seed: stalled(
        received(played(log, seed, move_median_ms=400), seed),
        at_action=len(log) // 2,
        stall_ms=5_000,
    ),
}


class ServerClock:
    """The server's clock in a test (`django.utils.timezone.now` reads it, `pinned`):
    it stands where it is set (`at`, `advance`), or moves `step` on at each reading."""

    def __init__(self, at: datetime.datetime, step: datetime.timedelta) -> None:
        self.at = at
        self.step = step

    def __call__(self) -> datetime.datetime:
        now = self.at
        self.at += self.step
        return now

    def advance(self, ms: float) -> None:
        self.at += datetime.timedelta(milliseconds=ms)


@contextmanager
def pinned(day: datetime.date, *, step_ms: float = 0) -> Iterator[ServerClock]:
    """The server's clock at noon (UTC) of `day` while the block runs: whatever the
    hour the test runs at, no day ends in it."""
    noon = datetime.datetime.combine(day, datetime.time(12), tzinfo=datetime.UTC)
    clock = ServerClock(noon, datetime.timedelta(milliseconds=step_ms))
    with mock.patch("django.utils.timezone.now", clock):
        yield clock
