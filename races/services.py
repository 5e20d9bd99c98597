"""Writes of races: create, join, leave, start, store a player's actions, end, play
again (the rematch).

Every write takes the race's row lock first, then its players' rows, so that
the player limit holds however many join at once, and two players winning at
the same moment end the race once: the first write wins, the other's winning
action comes after it and is refused. After each commit the race's players
hear of the change (`races.live.race_changed`). Players' actions are written as
attempts' are (`easyharp_site.steps`): on the server loop's own connections
where it has them, else on Django's in a thread.

A race ends at its first win, at its time limit, or when every player has
left. The time limit needs no one to act: no action is stored once the limit
is reached, so a race read after it reads as over with its final order
(`races.selectors`), and the end (ranks, winner, each player's game) is
stored by whichever comes first: an action or a socket of the race, a page,
or the `end races` job. A stored win is ended the same way, just after its
write (or by any of those, should the process stop in between).
"""

from __future__ import annotations

import datetime
import json
import logging
import math
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from channels.db import database_sync_to_async
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop
from rest_framework import status

from easyharp_site.dates import utc_aware
from easyharp_site.errors import ServiceError
from easyharp_site.steps import Steps, steps_lock, steps_run, steps_run_on_loop
from easyharp_site.throttling import identity_refusal
from games.models import DailyDeal
from games.rules import DEAL_MAX, Deal
from games.services import game_store
from races import live
from races.models import COUNTDOWN, LOBBY_KEPT, RACERS_MAX, TIME_LIMITS_MINUTES, Race, Racer
from races.selectors import race_places, race_winner, racers_in_order

logger = logging.getLogger(__name__)

# 15 random bytes: 120 bits, 20 URL-safe characters.
RACE_CODE_BYTES = 15


def _race_locked(code: str) -> Race:
    race = Race.objects.select_for_update().filter(code=code).first()
    if race is None:
        raise ServiceError(
            "not_found", "There is no such race.", status_code=status.HTTP_404_NOT_FOUND
        )
    return race


def _changed(race: Race) -> None:
    transaction.on_commit(partial(live.race_changed, race.pk))


def _over(race: Race) -> ServiceError:
    return ServiceError("race_over", "This race is over.", status_code=status.HTTP_409_CONFLICT)


def _fresh_deal() -> int:
    """A random deal that is no day's deal (past, today's or prepared ahead)."""
    while True:
        number = secrets.randbelow(DEAL_MAX) + 1
        if not DailyDeal.objects.filter(number=number).exists():
            return number


def _race_creation_count(host: User) -> None:
    """Count a race created by `host`; a 429 `throttled` past the `race` rate (each race
    is stored, with the games its players stream)."""
    wait = identity_refusal("race", f"player:{host.pk}")
    if wait is None:
        return
    seconds = max(1, math.ceil(wait))
    raise ServiceError(
        "throttled",
        gettext_noop("You have created many races lately: try again in {seconds} seconds."),
        status_code=status.HTTP_429_TOO_MANY_REQUESTS,
        words={"seconds": seconds},
        retry_after=seconds,
        wait=seconds,
    )


@transaction.atomic
def race_create(*, host: User, minutes: int) -> Race:
    """A new race on a fresh random deal, with `host` as its first player."""
    if minutes not in TIME_LIMITS_MINUTES:
        raise ServiceError(
            "invalid_time_limit",
            f"A race's time limit is one of {', '.join(map(str, TIME_LIMITS_MINUTES))} minutes.",
        )
    return _race_new(host=host, time_limit=datetime.timedelta(minutes=minutes))


def _race_new(*, host: User, time_limit: datetime.timedelta) -> Race:
    """A new race on a fresh deal, `host` in it: counted against the `race` rate."""
    _race_creation_count(host)
    now = timezone.now()
    race = Race.objects.create(
        code=secrets.token_urlsafe(RACE_CODE_BYTES),
        host=host,
        deal_number=_fresh_deal(),
        time_limit=time_limit,
        created_at=now,
    )
    Racer.objects.create(race=race, player=host, joined_at=now)
    return race


@transaction.atomic
def race_rematch(*, player: User, code: str) -> tuple[Race, bool]:
    """The rematch of the race `code` once it is over, and whether this call made it:
    a new race with the same time limit on a fresh deal, made by the first of its
    players to ask (its host), which every later asker joins (the others are told of
    it on the race's socket, and join in one click). A 403 `not_in_race` for anyone
    else, a 409 `race_not_over` before the end."""
    race = _race_locked(code)
    now = timezone.now()
    if not Racer.objects.filter(race=race, player=player).exists():
        raise ServiceError(
            "not_in_race", "You are not in this race.", status_code=status.HTTP_403_FORBIDDEN
        )
    if race.status(now) != "over":
        raise ServiceError(
            "race_not_over",
            "A rematch is made once the race is over.",
            status_code=status.HTTP_409_CONFLICT,
        )
    _end_if_due(race, now)
    # A rematch whose lobby everyone left is closed: a new one takes its place.
    if race.rematch is not None and race.rematch.end != Race.End.CANCELLED:
        return race_join(player=player, code=race.rematch.code), False
    rematch = _race_new(host=player, time_limit=race.time_limit)
    race.rematch = rematch
    race.save(update_fields=["rematch"])
    _changed(race)
    return rematch, True


@transaction.atomic
def race_join(*, player: User, code: str) -> Race:
    """`player` joins the race in its lobby. Joining again is harmless."""
    race = _race_locked(code)
    now = timezone.now()
    if Racer.objects.filter(race=race, player=player).exists():
        return race
    state = race.status(now)
    if state == "over":
        raise _over(race)
    if state != "lobby":
        raise ServiceError(
            "race_started",
            "This race has started: players join before the start.",
            status_code=status.HTTP_409_CONFLICT,
        )
    if race.racers.count() >= RACERS_MAX:
        raise ServiceError(
            "race_full",
            f"This race has {RACERS_MAX} players, the most a race may have.",
            status_code=status.HTTP_409_CONFLICT,
            limit=RACERS_MAX,
        )
    Racer.objects.create(race=race, player=player, joined_at=now)
    _changed(race)
    return race


def _racer_locked(race: Race, player: User) -> Racer:
    racer = Racer.objects.select_for_update().filter(race=race, player=player).first()
    if racer is None:
        raise ServiceError(
            "not_in_race", "You are not in this race.", status_code=status.HTTP_403_FORBIDDEN
        )
    return racer


def _racer_out(race: Race, racer: Racer, *, now: datetime.datetime, banned: bool = False) -> None:
    """The player is out of the race (both locked, the race not over). In the lobby they
    are simply gone (the next player in becomes the host; a lobby left empty is
    closed); once it has started their game stops where it is, and the last player
    out ends the race. `banned`: placed after everyone, never the winner."""
    if race.status(now) == "lobby":
        racer.delete()
        rest = list(race.racers.order_by("joined_at", "id"))
        if not rest:
            race.ended_at, race.end = now, Race.End.CANCELLED
            race.save(update_fields=["ended_at", "end"])
        elif race.host_id == racer.player_id:
            race.host_id = rest[0].player_id
            race.save(update_fields=["host"])
    elif racer.left_at is None or (banned and not racer.banned):
        racer.left_at = racer.left_at or now
        racer.banned = racer.banned or banned
        racer.save(update_fields=["left_at", "banned"])
        _end_if_due(race, now)
    _changed(race)


@transaction.atomic
def race_leave(*, player: User, code: str) -> Race:
    """`player` leaves the race: gone from its lobby, or, once it has started, their game
    stops where it is and keeps its place in the order (`_racer_out`). Leaving again,
    or an over race, changes nothing."""
    race = _race_locked(code)
    racer = _racer_locked(race, player)
    now = timezone.now()
    if race.status(now) == "over":
        _end_if_due(race, now)
    else:
        _racer_out(race, racer, now=now)
    return race


def player_banned_from_races(*, player: User) -> None:
    """A moderator banned `player` (`ranking.actions`, in the ban's transaction): once it
    commits, they are out of every race not over. After the commit, because each
    race write locks the race before its players' rows, and the ban holds the
    player's row: taking a race's lock under it could deadlock with that race's end."""
    transaction.on_commit(partial(races_leave_banned, player_id=player.pk))


def races_leave_banned(*, player_id: int) -> int:
    """Put the banned player out of each race of theirs not over: gone from a lobby (the
    lobby's players see it at once), their game stopped in a running race, where
    they rank last and cannot win. How many races it changed."""
    race_ids = Race.objects.filter(ended_at__isnull=True, racers__player_id=player_id)
    return sum(
        _race_leave_banned(race_id=race_id, player_id=player_id)
        for race_id in race_ids.values_list("pk", flat=True)
    )


@transaction.atomic
def _race_leave_banned(*, race_id: int, player_id: int) -> bool:
    race = Race.objects.select_for_update().filter(pk=race_id).first()
    racer = Racer.objects.select_for_update().filter(race_id=race_id, player_id=player_id).first()
    now = timezone.now()
    if race is None or racer is None or racer.banned:
        return False
    if race.status(now) == "over":
        _end_if_due(race, now)
        return False
    _racer_out(race, racer, now=now, banned=True)
    return True


@transaction.atomic
def race_start(*, player: User, code: str) -> Race:
    """The host starts the race: play begins after the countdown, for everyone at once.
    Starting again changes nothing."""
    race = _race_locked(code)
    now = timezone.now()
    state = race.status(now)
    if state == "over":
        raise _over(race)
    if race.host_id != player.pk:
        raise ServiceError(
            "not_host", "Only the race's host starts it.", status_code=status.HTTP_403_FORBIDDEN
        )
    if state != "lobby":
        return race
    race.starts_at = now + COUNTDOWN
    race.ends_at = race.starts_at + race.time_limit
    race.save(update_fields=["starts_at", "ends_at"])
    # Nobody is away at the start: the clock of each player's absence starts with the race.
    race.racers.update(seen_at=race.starts_at)
    _changed(race)
    return race


# --- Ending -------------------------------------------------------------------------


def _racer_game(race: Race, racer: Racer) -> int | None:
    """The player's game of the race, stored as a game of no day (replayable by link,
    on no board); none without an action, or for a player banned since."""
    if not racer.log:
        return None
    try:
        with transaction.atomic():  # a refusal undoes this game only, not the race's end
            game, _ = game_store(
                player=racer.player,
                deal=Deal(race.deal_number).code,
                log=racer.log,
                idempotency_key=f"race:{race.code}",
                times=racer.times,
                no_day=True,
            )
    except ServiceError as error:
        logger.info("Race %s: no game stored for %s (%s)", race.code, racer.player_id, error.code)
        return None
    return game.pk


def _end(race: Race, *, end: str, now: datetime.datetime, winner: User | None = None) -> None:
    """Store the end: when and why, each player's rank and game, and the winner."""
    racers = list(race.racers.select_for_update().select_related("player"))
    race.winner = winner
    race.end = end
    race.ended_at = min(now, race.ends_at) if race.ends_at is not None else now
    ordered = racers_in_order(racers, winner_id=winner.pk if winner is not None else None)
    first = race_winner(race, ordered)
    race.winner = first.player if first is not None else None
    for rank, racer in zip(race_places(ordered, over=True), ordered, strict=True):
        racer.rank = rank
        racer.game_id = _racer_game(race, racer)
        racer.save(update_fields=["rank", "game"])
    race.save(update_fields=["winner", "end", "ended_at"])
    _changed(race)


def _end_if_due(race: Race, now: datetime.datetime) -> bool:
    """End the race (locked) if a player's win is stored (the first of them wins), its
    time ran out or every player left; whether it did."""
    if race.ended_at is not None or race.starts_at is None:
        return False
    assert race.ends_at is not None
    first = race.racers.filter(won=True).order_by("last_action_ms", "pk").first()
    if first is not None:
        _end(race, end=Race.End.WON, now=now, winner=first.player)
        return True
    if now >= race.ends_at:
        _end(race, end=Race.End.TIME, now=now)
        return True
    if not race.racers.filter(left_at__isnull=True).exists():
        _end(race, end=Race.End.LEFT, now=now)
        return True
    return False


@transaction.atomic
def race_end_if_due(*, race_id: int) -> bool:
    """Store the end of a race that a player won, whose time ran out or whose players all
    left; whether this call ended it (a race ended already, or still running, is left
    as it is)."""
    race = Race.objects.select_for_update().filter(pk=race_id).first()
    if race is None:
        return False
    return _end_if_due(race, timezone.now())


def races_end_due(*, player: User | None = None) -> int:
    """End every race whose time ran out (of `player` only, when given), and close the
    lobbies nobody started within a day; how many ended."""
    now = timezone.now()
    due = Race.objects.filter(ended_at__isnull=True, ends_at__lte=now)
    if player is not None:
        due = due.filter(racers__player=player)
    ended = sum(race_end_if_due(race_id=race_id) for race_id in due.values_list("pk", flat=True))
    if player is None:
        ended += lobbies_close(before=now - LOBBY_KEPT)
    return ended


@transaction.atomic
def lobbies_close(*, before: datetime.datetime) -> int:
    """Close the lobbies created before `before` and never started."""
    return Race.objects.filter(
        starts_at__isnull=True, ended_at__isnull=True, created_at__lt=before
    ).update(ended_at=timezone.now(), end=Race.End.CANCELLED)


# --- A player's actions -------------------------------------------------------------


@dataclass(frozen=True)
class RaceSave:
    """A socket's write of its player's game (checked by the engine there): the whole
    game so far with the server's receive time of each action, over the stored
    `version`, and what the others see of it."""

    race_id: int
    player_id: int
    version: int
    log: list[str]
    times: list[int]
    score: int
    moves: int
    on_foundations: int
    won: bool


@dataclass(frozen=True)
class RaceSaveResult:
    """`saved` (at `version`); `stale` (another socket of the player wrote first: the
    stored `log`, `times` and `version`); or refused with the stored game: `not_started`,
    `race_over`, `left_race`, `not_in_race`."""

    outcome: str
    version: int = 0
    log: list[str] = field(default_factory=list)
    times: list[int] = field(default_factory=list)


_RACER_SAVE_SQL = """
UPDATE races_racer SET log = %s, times = %s, version = %s, score = %s, moves = %s,
    on_foundations = %s, won = %s, last_action_ms = %s, seen_at = %s
WHERE id = %s
"""


def races_actions_save(*, saves: Sequence[RaceSave]) -> list[RaceSaveResult]:
    """Store players' games as their sockets hold them, in one transaction (the writes
    of a process's race sockets are grouped, `games.batches`); one result per save.
    On Django's connection, in a thread: the embedded database's way, and any
    caller's outside a server's loop (`_race_save_steps` says what goes through).

    A win, or a save that finds the race's time run out, ends the race once the
    write committed (`race_end_if_due`: ranks, winner, each player's game, and
    its players told). Other stored actions are announced by the sockets that
    stored them (`live.RaceAnnouncer`).
    """
    results, ending = steps_run(_race_save_steps(saves, lock=steps_lock()))
    for race_id in ending:
        race_end_if_due(race_id=race_id)
    return results


async def races_actions_save_on_loop(*, saves: Sequence[RaceSave]) -> list[RaceSaveResult]:
    """`races_actions_save` on a PostgreSQL connection of the running loop
    (`easyharp_site.steps`), as attempts write theirs; a race's end (rare, and
    written with the ORM) in the database's thread."""
    results, ending = await steps_run_on_loop(_race_save_steps(saves, lock=True))
    for race_id in ending:
        await database_sync_to_async(race_end_if_due)(race_id=race_id)
    return results


# The races and players of a group of saves, each in one order, as the other writes of
# a race lock them (races, then players): each race with its moments and whether one
# of its players' wins is stored, each player with their version and whether they
# left. Plain SQL, as attempts' (the ORM's building of these statements cost more
# than the rest of a write).
_RACES_LOCK_SQL = """
SELECT r.id, r.starts_at, r.ends_at, r.ended_at,
    EXISTS (SELECT 1 FROM races_racer w WHERE w.race_id = r.id AND w.won)
FROM races_race r WHERE r.id IN ({ids}) ORDER BY r.id
"""
_RACERS_LOCK_SQL = """
SELECT id, race_id, player_id, version, left_at FROM races_racer
WHERE race_id IN ({ids}) AND player_id IN ({players}) ORDER BY id
"""
# The stored game of players whose save was refused (it goes back to their socket).
_RACERS_STORED_SQL = "SELECT id, log, times FROM races_racer WHERE id IN ({ids})"


def _race_save_steps(
    saves: Sequence[RaceSave], *, lock: bool
) -> Steps[tuple[list[RaceSaveResult], list[int]]]:
    """The statements of a group of race saves (`easyharp_site.steps`); one result per
    save, and the races to end once they committed (a win stored, or the time run out).

    A save goes through if its race runs, nobody won it yet (a second win in
    the same moment comes after the first and is refused), its player is in
    it, and the stored game is the one the socket built on.
    """
    race_ids = sorted({save.race_id for save in saves})
    players = sorted({save.player_id for save in saves})
    for_update = " FOR UPDATE" if lock else ""
    marks = ", ".join(["%s"] * len(race_ids))
    race_rows = yield (_RACES_LOCK_SQL.format(ids=marks) + for_update, race_ids, False)
    races = {
        row[0]: Race(
            id=row[0],
            starts_at=row[1] and utc_aware(row[1]),
            ends_at=row[2] and utc_aware(row[2]),
            ended_at=row[3] and utc_aware(row[3]),
        )
        for row in race_rows
    }
    won = {row[0] for row in race_rows if row[4]}
    racer_rows = yield (
        _RACERS_LOCK_SQL.format(ids=marks, players=", ".join(["%s"] * len(players))) + for_update,
        race_ids + players,
        False,
    )
    seats = {
        (row[1], row[2]): Racer(
            id=row[0], race_id=row[1], player_id=row[2], version=row[3], left_at=row[4]
        )
        for row in racer_rows
    }
    now = timezone.now()
    ending: set[int] = set()
    written: dict[int, tuple[Any, ...]] = {}
    # A result, or the refusal of a player whose stored game goes with it (read below).
    results: list[RaceSaveResult | tuple[str, Racer]] = []
    for save in saves:
        race, racer = races.get(save.race_id), seats.get((save.race_id, save.player_id))
        if race is None or racer is None:
            results.append(RaceSaveResult("not_in_race"))
            continue
        refusal = _race_save_refusal(race, racer, save, now, won=race.pk in won)
        if refusal == "race_over" and race.ended_at is None:
            ending.add(race.pk)
        if refusal is not None:
            results.append((refusal, racer))
            continue
        racer.version += 1
        last_action_ms = save.times[-1] if save.times else None
        written[racer.pk] = (
            " ".join(save.log),
            json.dumps(save.times),
            racer.version,
            save.score,
            save.moves,
            save.on_foundations,
            save.won,
            last_action_ms,
            now,
            racer.pk,
        )
        results.append(RaceSaveResult("saved", racer.version))
        if save.won:
            won.add(race.pk)
            ending.add(race.pk)
    unread = sorted({item[1].pk for item in results if isinstance(item, tuple)} - set(written))
    stored: dict[int, tuple[list[str], list[int]]] = {
        racer_id: (row[0].split(), json.loads(row[1])) for racer_id, row in written.items()
    }
    if unread:
        rows = yield (_RACERS_STORED_SQL.format(ids=", ".join(["%s"] * len(unread))), unread, False)
        for racer_id, log, times in rows:
            times = json.loads(times) if isinstance(times, str) else times
            stored[racer_id] = (log.split(), [int(time) for time in times])
    if written:
        yield (_RACER_SAVE_SQL, list(written.values()), True)
    return [
        RaceSaveResult(item[0], item[1].version, *stored[item[1].pk])
        if isinstance(item, tuple)
        else item
        for item in results
    ], sorted(ending)


def _race_save_refusal(
    race: Race, racer: Racer, save: RaceSave, now: datetime.datetime, *, won: bool
) -> str | None:
    """Why `save` may not be stored now (a `RaceSaveResult` outcome), or None. `won`:
    a player's win of the race is stored (its end may not be yet)."""
    state = race.status(now)
    if state in {"lobby", "countdown"}:
        return "not_started"
    if state == "over" or won:
        return "race_over"
    if racer.left_at is not None:
        return "left_race"
    if racer.version != save.version:
        return "stale"
    return None


def racer_seen(*, race_id: int, player_id: int) -> None:
    """The player's page answered (a heartbeat, a connection): not away."""
    Racer.objects.filter(race_id=race_id, player_id=player_id).update(seen_at=timezone.now())
