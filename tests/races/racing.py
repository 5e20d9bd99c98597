"""What the race tests share: a race made ready to play, a player's actions stored as
their socket stores them, and the race's socket opened as a page opens it."""

from __future__ import annotations

import datetime
from typing import Any

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import F
from django.test import Client

from easyharp_site.asgi import application
from games import rules
from races import services
from races.models import COUNTDOWN, Race, Racer
from tests.fixtures import DEAL_NUMBER

# Deal 4: the conformance vectors hold a win of it (tests.fixtures.WIN_LOG).
RACE_DEAL = DEAL_NUMBER


def race_for(host: AbstractBaseUser, *players: AbstractBaseUser, minutes: int = 10) -> Race:
    """A race hosted by `host` with `players` in its lobby, on deal 4 (whose win the
    tests know); no day's deal is deal 4 in these tests."""
    race = services.race_create(host=host, minutes=minutes)
    Race.objects.filter(pk=race.pk).update(deal_number=RACE_DEAL)
    for player in players:
        services.race_join(player=player, code=race.code)
    race.refresh_from_db()
    return race


def rewind(race: Race, seconds: float) -> None:
    """Move the race's start and end `seconds` back, as if it had started that long ago."""
    back = datetime.timedelta(seconds=seconds)
    Race.objects.filter(pk=race.pk).update(
        starts_at=F("starts_at") - back, ends_at=F("ends_at") - back
    )
    race.refresh_from_db()


def running(race: Race) -> Race:
    """The race started by its host, its countdown over: play is on."""
    services.race_start(player=race.host, code=race.code)
    rewind(race, COUNTDOWN.total_seconds())
    return race


def racer(race: Race, player: AbstractBaseUser) -> Racer:
    return Racer.objects.get(race=race, player=player)


def store(race: Race, player: AbstractBaseUser, tokens: list[str], *, at_ms: int = 0) -> str:
    """Store `tokens` after the player's stored game, as their socket would (checked by
    the engine, each received `at_ms`); the service's outcome."""
    stored = racer(race, player)
    times = [int(time) for time in stored.times] + [at_ms] * len(tokens)
    save = race_save(race, player, stored.log.split() + tokens, stored.version, times)
    [result] = services.races_actions_save(saves=[save])
    return result.outcome


def session_cookie(player: AbstractBaseUser) -> tuple[bytes, bytes]:
    client = Client()
    client.force_login(player)
    return (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())


async def open_socket(player: AbstractBaseUser | None, code: str) -> WebsocketCommunicator:
    """A connected race socket (not past its first message)."""
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
    if player is not None:
        headers.append(await database_sync_to_async(session_cookie)(player))
    communicator = WebsocketCommunicator(application, f"/ws/races/{code}/", headers=headers)
    connected, _ = await communicator.connect()
    assert connected
    return communicator


async def welcomed(player: AbstractBaseUser, code: str) -> tuple[WebsocketCommunicator, Any]:
    """A race socket and its welcome."""
    communicator = await open_socket(player, code)
    welcome = await communicator.receive_json_from(timeout=5)
    assert welcome["type"] == "welcome", welcome
    return communicator, welcome


def race_save(
    race: Race,
    player: AbstractBaseUser,
    log: list[str],
    version: int,
    times: list[int] | None = None,
) -> services.RaceSave:
    """A socket's save of `player`'s game `log` in `race` over the stored `version`
    (`times`: one per action, 1 s each by default), with what the engine says of it."""
    game = rules.replay(rules.Deal(RACE_DEAL), log)
    return services.RaceSave(
        race_id=race.pk,
        player_id=player.pk,
        version=version,
        log=list(game.log),
        times=times if times is not None else [1000] * len(log),
        score=game.score,
        moves=game.moves,
        on_foundations=game.on_foundations,
        won=game.is_won,
    )
