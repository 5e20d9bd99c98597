"""A ranked attempt streamed in bursts is flagged by the pace of its moves as the server
received them, each action at its own receive time, whatever the server's writes.

Through the attempt's socket (`WebsocketCommunicator`, the whole ASGI stack)
with the server's clock pinned and moved by the test (`tests.timings.pinned`):
each action is sent once the one before it was acknowledged, so that its receive
time is the clock's as the test set it.
"""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator, Iterator, Sequence

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import connections
from django.utils import timezone

from games import review
from games.models import Attempt, DailyDeal, Game
from games.services import attempt_start
from ranking.actions import game_submit
from tests.fixtures import DEAL, WIN_LOG
from tests.games.test_attempt_stream import answer, send_action, stream_open
from tests.timings import HONEST, ServerClock, pinned

pytestmark = pytest.mark.django_db(transaction=True)

sync = database_sync_to_async
MOVES = sum(token not in review.TAPS for token in WIN_LOG)
# The attack's pace: a person's 160 ms an action, waited out before the socket opens.
WAITED_MS = 160 * len(WIN_LOG)
# As fast as the socket takes actions sent at once (803 in 136 ms were measured).
ACTIONS_PER_MS = 6


@pytest.fixture(autouse=True)
async def _close_database_thread_connections() -> AsyncIterator[None]:
    yield
    await database_sync_to_async(connections.close_all)()


async def send_acknowledged(communicator: WebsocketCommunicator, number: int, token: str) -> None:
    """Send action `number` and wait until the server stored it."""
    await send_action(communicator, number, token)
    while True:
        message = await answer(communicator)
        assert message["type"] == "ack", message
        if message["n"] >= number:
            return


async def burst(
    communicator: WebsocketCommunicator, clock: ServerClock, first: int, tokens: Sequence[str]
) -> None:
    """`tokens` from action `first` on, all at once: `ACTIONS_PER_MS` each millisecond."""
    for number, token in enumerate(tokens, start=first):
        if (number - first) % ACTIONS_PER_MS == 0:
            clock.advance(1)
        await send_acknowledged(communicator, number, token)


async def at_pace(
    communicator: WebsocketCommunicator,
    clock: ServerClock,
    attempt: Attempt,
    first: int,
    tokens: Sequence[str],
    times: Sequence[int],
) -> None:
    """`tokens` from action `first` on, each received at its time (ms from the start)."""
    for number, (token, at) in enumerate(zip(tokens, times, strict=True), start=first):
        clock.at = max(clock.at, attempt.started_at + datetime.timedelta(milliseconds=at))
        await send_acknowledged(communicator, number, token)


async def ranked(player: AbstractBaseUser, clock: ServerClock) -> Game:
    """The attempt's game submitted whole, half a second after its last action."""
    clock.advance(500)
    game, _ = await sync(game_submit)(player=player, deal=DEAL, log=WIN_LOG)
    assert game.ranked
    return game


def started(player: AbstractBaseUser) -> Attempt:
    attempt, _ = attempt_start(player=player, date=timezone.now().date())
    return attempt


@pytest.fixture
def clock(daily: DailyDeal) -> Iterator[ServerClock]:
    with pinned(daily.date) as clock:
        yield clock


async def test_a_win_sent_at_once_after_a_human_wait_is_flagged_by_its_receive_times(
    alice: AbstractBaseUser, clock: ServerClock
) -> None:
    attempt = await sync(started)(alice)
    clock.advance(WAITED_MS)
    communicator, _ = await stream_open(alice)
    await burst(communicator, clock, 1, WIN_LOG)
    await communicator.disconnect()

    game = await ranked(alice, clock)
    stored = await sync(Attempt.objects.get)(pk=attempt.pk)

    # Each action has its own receive time, not its write's.
    assert stored.times == [WAITED_MS + 1 + i // ACTIONS_PER_MS for i in range(len(WIN_LOG))]
    # No save or write brought much at once, and the long wait makes the times uneven.
    assert game.review["largest_step_actions"] == ACTIONS_PER_MS
    assert game.review["time_variation"] > review.REGULAR_MAX_VARIATION
    assert game.review["ms_per_action"] >= review.MIN_MS_PER_ACTION
    # Yet every move came in a burst, and a run of them at a machine's pace.
    assert set(game.flags) == {"bursts", "machine_pace"}
    assert game.review["burst_moves"] >= MOVES - 1
    assert game.review["silence_before_largest_burst_ms"] >= WAITED_MS
    assert game.review["fastest_run_ms_per_move"] < review.RUN_MAX_MS_PER_MOVE
    assert game.review_state == "flagged"


async def test_a_win_sent_in_three_bursts_is_flagged(
    alice: AbstractBaseUser, clock: ServerClock
) -> None:
    await sync(started)(alice)
    communicator, _ = await stream_open(alice)
    third = len(WIN_LOG) // 3
    for first in (0, third, 2 * third):
        clock.advance(WAITED_MS / 3)
        end = first + third if first < 2 * third else len(WIN_LOG)
        await burst(communicator, clock, first + 1, WIN_LOG[first:end])
    await communicator.disconnect()

    game = await ranked(alice, clock)

    assert {"bursts", "machine_pace"} <= set(game.flags)
    assert game.review["burst_share"] > 0.9


async def test_a_game_played_at_a_persons_pace_then_finished_at_once_after_a_pause_is_flagged(
    alice: AbstractBaseUser, clock: ServerClock
) -> None:
    attempt = await sync(started)(alice)
    times = HONEST["quick player"](WIN_LOG, 1)
    # Played in person up to its last 40 moves, which come at once after a pause.
    cut = [i for i, token in enumerate(WIN_LOG) if token not in review.TAPS][-40]
    communicator, _ = await stream_open(alice)
    await at_pace(communicator, clock, attempt, 1, WIN_LOG[:cut], times[:cut])
    clock.advance(review.BURST_SILENCE_MS)
    await burst(communicator, clock, cut + 1, WIN_LOG[cut:])
    await communicator.disconnect()

    game = await ranked(alice, clock)

    assert game.flags == ["bursts"], game.review
    assert game.review["largest_burst_moves"] == 40
    assert game.review["silence_before_largest_burst_ms"] >= review.BURST_SILENCE_MS


async def test_a_persons_game_streamed_with_a_reload_in_the_middle_is_not_flagged(
    alice: AbstractBaseUser, clock: ServerClock
) -> None:
    attempt = await sync(started)(alice)
    times = HONEST["quick player"](WIN_LOG, 2)
    reload = len(WIN_LOG) // 2
    communicator, _ = await stream_open(alice)
    await at_pace(communicator, clock, attempt, 1, WIN_LOG[:reload], times[:reload])
    # Three actions sent as the page goes away, unanswered; the new page sends again
    # what the server did not store, then plays on.
    for number in range(reload + 1, reload + 4):
        await send_action(communicator, number, WIN_LOG[number - 1])
    await communicator.disconnect()
    clock.advance(3_000)
    communicator, state = await stream_open(alice)
    for number in range(state["actions"] + 1, reload + 4):
        await send_acknowledged(communicator, number, WIN_LOG[number - 1])
    rest = [at + 3_000 for at in times[reload + 3 :]]
    await at_pace(communicator, clock, attempt, reload + 4, WIN_LOG[reload + 3 :], rest)
    await communicator.disconnect()

    game = await ranked(alice, clock)

    assert game.flags == []
    assert game.review["burst_moves"] == 0
    assert game.review["fastest_run_ms_per_move"] > 2 * review.RUN_MAX_MS_PER_MOVE
