"""The write of a group of race saves (`races.services`) takes the attempts' path: the
same statements on a connection of the loop's own pool (`races_actions_save_on_loop`,
PostgreSQL) and on Django's in a thread (`races_actions_save`, any database), with
the same results; a win is ended just after its write."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.base_user import AbstractBaseUser

from easyharp_site import loop_pool
from games.batches import StreamWriter
from races import services
from races.consumers import race_writer
from races.models import Race
from tests.fixtures import WIN_LOG
from tests.races.racing import race_for, race_save, racer, running

pytestmark = pytest.mark.django_db(transaction=True)

Players = Callable[[str], AbstractBaseUser]


def _on_loop(*, saves: list[services.RaceSave]) -> Any:
    async def write() -> Any:
        await loop_pool.open_pool()
        try:
            return await services.races_actions_save_on_loop(saves=saves)
        finally:
            await loop_pool.close()

    return async_to_sync(write)()


DRIVERS = [
    pytest.param(services.races_actions_save, id="thread"),
    pytest.param(_on_loop, id="loop", marks=pytest.mark.postgres),
]


def _save(race: Race, player: AbstractBaseUser, log: list[str], version: int) -> services.RaceSave:
    """`race_save` with the n-th action received n seconds into the race."""
    return race_save(race, player, log, version, times=[1000 * n for n in range(1, len(log) + 1)])


@pytest.mark.parametrize("write", DRIVERS)
def test_each_save_goes_through_or_says_why_not(
    write: Callable[..., Any], make_player: Players
) -> None:
    alice, bob, carol, dave = (make_player(name) for name in ("alice", "bob", "carol", "dave"))
    race = running(race_for(alice, bob, carol))
    lobby = race_for(dave)
    services.race_leave(player=carol, code=race.code)

    results = write(
        saves=[
            _save(race, alice, WIN_LOG[:10], 0),
            _save(race, bob, WIN_LOG[:3], 0),
            _save(race, alice, WIN_LOG[:12], 1),  # the same socket's next write
            _save(race, alice, WIN_LOG[:11], 1),  # another socket's, over version 1
            _save(race, carol, WIN_LOG[:2], 0),  # left the race
            _save(lobby, dave, ["S"], 0),  # not started
            _save(race, dave, ["S"], 0),  # not in it
        ]
    )

    assert [(result.outcome, result.version) for result in results] == [
        ("saved", 1), ("saved", 1), ("saved", 2), ("stale", 2), ("left_race", 0),
        ("not_started", 0), ("not_in_race", 0),
    ]  # fmt: skip
    assert results[3].log == WIN_LOG[:12] and results[3].times[-1] == 12_000
    stored = racer(race, alice)
    assert (stored.log.split(), stored.version, stored.last_action_ms) == (WIN_LOG[:12], 2, 12_000)
    assert racer(race, bob).log.split() == WIN_LOG[:3]


@pytest.mark.parametrize("write", DRIVERS)
def test_a_win_ends_the_race_and_a_later_save_is_refused(
    write: Callable[..., Any], alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = running(race_for(alice, bob))

    results = write(
        saves=[
            _save(race, bob, WIN_LOG[:50], 0),
            _save(race, alice, WIN_LOG, 0),
            _save(race, bob, WIN_LOG[:60], 1),  # after the win, in the same group
        ]
    )
    later = write(saves=[_save(race, bob, WIN_LOG[:61], 1)])

    assert [result.outcome for result in results] == ["saved", "saved", "race_over"]
    assert results[2].log == WIN_LOG[:50]
    assert [result.outcome for result in later] == ["race_over"]
    race.refresh_from_db()
    assert (race.end, race.winner) == (Race.End.WON, alice)
    assert racer(race, alice).rank == 1 and racer(race, alice).game.won
    assert racer(race, bob).log.split() == WIN_LOG[:50] and racer(race, bob).game is not None


def test_a_stored_win_whose_end_was_not_written_ends_the_race_at_the_next_look(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    """The process stopped between a win's write and its end: the race is over for
    every later save, and whatever looks next (a socket, a page, the job) ends it
    with the first win as the winner."""
    race = running(race_for(alice, bob))
    services.races_actions_save(saves=[_save(race, bob, WIN_LOG[:20], 0)])
    racer_row = racer(race, alice)
    racer_row.log, racer_row.won, racer_row.version = " ".join(WIN_LOG), True, 1
    racer_row.last_action_ms = 90_000
    racer_row.save()

    [refused] = services.races_actions_save(saves=[_save(race, bob, WIN_LOG[:21], 1)])

    assert refused.outcome == "race_over"
    race.refresh_from_db()
    assert (race.end, race.winner) == (Race.End.WON, alice)
    assert services.race_end_if_due(race_id=race.pk) is False


def test_the_race_sockets_write_on_the_loop_where_its_pool_is_open() -> None:
    async def writers() -> tuple[bool, bool]:
        without = race_writer() is StreamWriter.of(services.races_actions_save)
        opened = await loop_pool.open_pool()
        try:
            with_pool = race_writer() is StreamWriter.of(services.races_actions_save_on_loop)
        finally:
            await loop_pool.close()
        return without, with_pool == opened

    assert async_to_sync(writers)() == (True, True)
