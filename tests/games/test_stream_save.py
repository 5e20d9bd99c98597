"""The write of a group of streamed games (`games.services`): on a connection of the
loop's own pool (`attempts_stream_save_on_loop`, PostgreSQL) and on Django's in a
thread (`attempts_stream_save`, any database), the same statements with the same
results."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.base_user import AbstractBaseUser
from django.utils import timezone

from easyharp_site import loop_pool
from games.batches import StreamWriter
from games.models import Attempt, DailyDeal
from games.services import (
    StreamedSave,
    attempt_save,
    attempt_start,
    attempts_stream_save,
    attempts_stream_save_on_loop,
)
from tests.fixtures import WIN_LOG, play_ranked

pytestmark = pytest.mark.django_db(transaction=True)


def _on_loop(*, saves: list[StreamedSave]) -> Any:
    async def write() -> Any:
        await loop_pool.open_pool()
        try:
            return await attempts_stream_save_on_loop(saves=saves)
        finally:
            await loop_pool.close()

    return async_to_sync(write)()


DRIVERS = [
    pytest.param(attempts_stream_save, id="thread"),
    pytest.param(_on_loop, id="loop", marks=pytest.mark.postgres),
]


def save_of(attempt: Attempt, log: list[str], version: int) -> StreamedSave:
    return StreamedSave(
        attempt_id=attempt.pk,
        player_id=attempt.player_id,
        version=version,
        log=log,
        times=[100 * n for n in range(1, len(log) + 1)],
    )


@pytest.mark.parametrize("write", DRIVERS)
def test_each_save_goes_through_or_says_why_not(
    write: Callable[..., Any],
    make_player: Callable[[str], AbstractBaseUser],
    daily: DailyDeal,
) -> None:
    today = timezone.now().date()
    fresh, behind, done, banned = (
        make_player(name) for name in ("fresh", "behind", "done", "banned")
    )
    attempts = {
        player.username: attempt_start(player=player, date=today)[0]
        for player in (fresh, behind, banned)
    }
    # Another device of `behind` saved two actions first.
    attempt_save(player=behind, date=today, log=WIN_LOG[:2], version=0)
    play_ranked(done, WIN_LOG[:3])
    closed = Attempt.objects.get(player=done)
    banned.is_active = False
    banned.save(update_fields=["is_active"])

    results = write(
        saves=[
            save_of(attempts["fresh"], WIN_LOG[:1], 0),
            save_of(attempts["behind"], WIN_LOG[:1], 0),
            save_of(closed, WIN_LOG[:4], closed.version),
            save_of(attempts["banned"], WIN_LOG[:1], 0),
            # The same attempt twice in one group: the second builds on the first.
            save_of(attempts["fresh"], WIN_LOG[:2], 1),
        ]
    )

    assert [result.outcome for result in results] == [
        "saved", "stale", "attempt_closed", "player_banned", "saved",
    ]  # fmt: skip
    assert (results[0].version, results[4].version) == (1, 2)
    assert (results[1].version, results[1].log) == (1, WIN_LOG[:2])
    assert results[2].game == closed.game.pk
    stored = Attempt.objects.get(pk=attempts["fresh"].pk)
    assert (stored.log.split(), stored.version, stored.times) == (WIN_LOG[:2], 2, [100, 200])
    assert Attempt.objects.get(pk=attempts["banned"].pk).log == ""


def test_the_sockets_write_on_the_loop_where_its_pool_is_open() -> None:
    async def writers() -> tuple[bool, bool]:
        without = StreamWriter.current() is StreamWriter.of(attempts_stream_save)
        opened = await loop_pool.open_pool()
        try:
            with_pool = StreamWriter.current() is StreamWriter.of(attempts_stream_save_on_loop)
        finally:
            await loop_pool.close()
        return without, with_pool == opened

    assert async_to_sync(writers)() == (True, True)
