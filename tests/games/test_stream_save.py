"""The write of a group of streamed games (`games.services.attempts_stream_save`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.base_user import AbstractBaseUser
from django.utils import timezone

from games.batches import StreamWriter
from games.models import Attempt, DailyDeal
from games.services import (
    StreamedSave,
    attempt_save,
    attempt_start,
    attempts_stream_save,
)
from tests.fixtures import WIN_LOG, play_ranked

pytestmark = pytest.mark.django_db(transaction=True)


def save_of(attempt: Attempt, log: list[str], version: int) -> StreamedSave:
    return StreamedSave(
        attempt_id=attempt.pk,
        player_id=attempt.player_id,
        version=version,
        log=log,
        times=[100 * n for n in range(1, len(log) + 1)],
    )


def test_each_save_goes_through_or_says_why_not(
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

    results = attempts_stream_save(
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


def test_the_sockets_write_through_one_writer_per_loop() -> None:
    async def writers() -> tuple[StreamWriter[Any, Any], StreamWriter[Any, Any]]:
        return StreamWriter.current(), StreamWriter.of(attempts_stream_save)

    current, of_save = async_to_sync(writers)()
    assert current is of_save
