"""A race's stored actions are announced at most RACE_UPDATES_PER_SECOND times a second
(races/live.py, `RaceAnnouncer`), the last change always sent."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from races import live

Sent = list[tuple[int, float]]


@pytest.fixture
def sent(settings: Any) -> Sent:
    """The races sent, each with the monotonic clock (the event loop's) at its send."""
    settings.RACE_UPDATES_PER_SECOND = 4
    return []


def announcer(sent: Sent) -> live.RaceAnnouncer:
    """An announcer that records what it sends rather than read and send the race."""

    async def record(race_id: int) -> None:
        sent.append((race_id, time.monotonic()))

    return live.RaceAnnouncer(asyncio.get_running_loop(), record)


async def _until(sent: Sent, count: int) -> None:
    while len(sent) < count:
        await asyncio.sleep(0.01)


async def test_a_quiet_race_is_sent_at_once_and_a_busy_one_once_an_interval(sent: Sent) -> None:
    races = announcer(sent)

    races.changed(1)
    await asyncio.wait_for(_until(sent, 1), 30)
    for _ in range(5):  # five more stored actions of race 1 within its interval
        races.changed(1)
    races.changed(2)  # another race does not wait for race 1's interval
    await asyncio.wait_for(_until(sent, 3), 30)
    races.changed(2)
    await asyncio.wait_for(_until(sent, 4), 30)

    assert [race for race, _ in sent] == [1, 2, 1, 2]
    # Race 1's five changes made one send, a quarter of a second after its first.
    assert sent[2][1] - sent[0][1] >= 0.25 - 0.005
    assert sent[3][1] - sent[1][1] >= 0.25 - 0.005


async def test_the_last_change_is_always_sent(sent: Sent) -> None:
    races = announcer(sent)
    races.changed(7)
    await asyncio.wait_for(_until(sent, 1), 30)

    races.changed(7)

    await asyncio.wait_for(_until(sent, 2), 30)
    assert [race for race, _ in sent] == [7, 7]
