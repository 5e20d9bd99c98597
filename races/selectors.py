"""Reads of races: a race by its code, its players in race order, what every page and
socket shows of it, and a player's races. Reads never write: a race whose time
ran out reads as over, with its final order, before the end is stored."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Count
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop
from rest_framework import status

from easyharp_site.errors import ServiceError
from games.models import Game
from games.origins import GameOrigin
from races.models import AWAY_AFTER, RACERS_MAX, Race, Racer


def race_get(*, code: str) -> Race:
    """The race whose link holds `code`, or a 404 `not_found`."""
    race = Race.objects.select_related("host", "winner", "rematch").filter(code=code).first()
    if race is None:
        raise ServiceError(
            "not_found",
            gettext_noop("There is no race {race}."),
            status_code=status.HTTP_404_NOT_FOUND,
            words={"race": repr(code[:40])},
        )
    return race


def race_by_id(*, race_id: int) -> Race:
    """The race `race_id` (for the sockets and jobs, which hold its id)."""
    return Race.objects.select_related("host", "winner", "rematch").get(pk=race_id)


def race_racers(*, race: Race) -> list[Racer]:
    """The race's players (with their accounts), in the order they joined; without
    their games' logs and times, which no reader of the race's state needs (it is read
    after every stored action)."""
    return list(
        race.racers.select_related("player").defer("log", "times").order_by("joined_at", "id")
    )


def race_with_racers(*, race_id: int) -> tuple[Race, list[Racer]]:
    """The race `race_id` and its players, in one query (the race's state is read
    after its players' stored actions, many times a second in a busy race)."""
    racers = list(
        Racer.objects.filter(race_id=race_id)
        .select_related("player", "race", "race__rematch")
        .defer("log", "times")
        .order_by("joined_at", "id")
    )
    return (racers[0].race if racers else race_by_id(race_id=race_id)), racers


def _order_key(racer: Racer, winner_id: int | None) -> tuple[Any, ...]:
    played = racer.last_action_ms is not None
    return (
        racer.banned,
        racer.player_id != winner_id,
        not played,
        -racer.score,
        racer.moves,
        racer.last_action_ms if played else 0,
        racer.joined_at,
        racer.pk,
    )


def racers_in_order(racers: list[Racer], *, winner_id: int | None = None) -> list[Racer]:
    """The race order (docs/RULES.md 10.3): the winner by a win first, then higher
    score, fewer moves, the earlier last action; a player with no action after those
    who played, and a player banned during the race after everyone."""
    return sorted(racers, key=lambda racer: _order_key(racer, winner_id))


def race_places(ordered: list[Racer], *, over: bool) -> list[int | None]:
    """Each player's place in `ordered` (the race order): 1, 2, 3, ... while the race
    runs, and once over; none at all for a race over in which nobody played an action."""
    if over and all(racer.last_action_ms is None for racer in ordered):
        return [None] * len(ordered)
    return list(range(1, len(ordered) + 1))


def race_winner(race: Race, ordered: list[Racer]) -> Racer | None:
    """Who wins: the first to win, else (once over) the first in order if they played."""
    if race.winner_id is not None:
        return next((racer for racer in ordered if racer.player_id == race.winner_id), None)
    if race.end == Race.End.CANCELLED or not ordered:
        return None
    if ordered[0].last_action_ms is None or ordered[0].banned:
        return None
    return ordered[0]


def _when(moment: datetime.datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def _racer_away(race: Race, racer: Racer, *, status: str, now: datetime.datetime) -> bool:
    if status != "running" or racer.left_at is not None or racer.won:
        return False
    seen = racer.seen_at or race.starts_at
    return seen is None or now - seen > AWAY_AFTER


def race_state(
    *, race: Race, now: datetime.datetime, racers: list[Racer] | None = None
) -> dict[str, Any]:
    """What the race's players see of it (JSON-ready): its status and moments, and each
    player's progress, in race order; never a table or a move. The deal is told
    once the countdown begins (to others once it is over: `race_state_watched`)."""
    racers = race_racers(race=race) if racers is None else racers
    status_now = race.status(now)
    ordered = racers_in_order(racers, winner_id=race.winner_id)
    winner = race_winner(race, ordered) if status_now == "over" else None
    host = next((racer.player for racer in racers if racer.player_id == race.host_id), None)
    return {
        "code": race.code,
        "status": status_now,
        "end": race.end or ("time" if status_now == "over" else None),
        "deal": race.deal_code if status_now != "lobby" else None,
        "time_limit_s": int(race.time_limit.total_seconds()),
        "max_players": RACERS_MAX,
        "host": host.get_username() if host is not None else None,
        "winner": winner.player.get_username() if winner is not None else None,
        "created_at": _when(race.created_at),
        "starts_at": _when(race.starts_at),
        "ends_at": _when(race.ends_at),
        "ended_at": _when(race.ended_at or (race.ends_at if status_now == "over" else None)),
        # Once over: the race its players made to play again, to join (`services.race_rematch`).
        "rematch": race.rematch.code if race.rematch is not None else None,
        "players": [
            {
                "player": racer.player.get_username(),
                "place": place,
                "score": racer.score,
                "moves": racer.moves,
                "foundations": racer.on_foundations,
                "won": racer.won,
                "time_ms": racer.last_action_ms,
                "left": racer.left_at is not None,
                "removed": racer.banned,
                "away": _racer_away(race, racer, status=status_now, now=now),
                "game": racer.game_id,
            }
            for place, racer in zip(
                race_places(ordered, over=status_now == "over"), ordered, strict=True
            )
        ],
    }


def race_state_watched(state: dict[str, Any]) -> dict[str, Any]:
    """What someone not in the race sees of `race_state`: the same players and progress,
    but no deal until the race is over. The deal is every table of the race: an
    onlooker could work out its answer and hand it to a player, whose hints are
    held for the race (`race_deal_hold`)."""
    if state["status"] == "over":
        return state
    return {**state, "deal": None}


def race_state_for(*, race: Race, viewer: User | None, now: datetime.datetime) -> dict[str, Any]:
    """`race_state` as `viewer` may see it: whole for one of its players, else watched."""
    state = race_state(race=race, now=now)
    if viewer is not None and viewer.is_authenticated and racer_get(race=race, player=viewer):
        return state
    return race_state_watched(state)


def race_deal_hold(number: int) -> ServiceError | None:
    """The refusal of a hint on deal `number` while a race plays it (from its countdown
    to its end), or None: a hint would be the race's answer (`ranking.api.HintApi`)."""
    now = timezone.now()
    playing = Race.objects.filter(
        deal_number=number, starts_at__isnull=False, ended_at__isnull=True, ends_at__gt=now
    )
    if not playing.exists():
        return None
    return ServiceError(
        "race_running",
        "A race plays this deal now: its hints wait for the race to end.",
        status_code=status.HTTP_403_FORBIDDEN,
    )


def race_game_origins(games: Sequence[Game]) -> dict[int, GameOrigin]:
    """The races `games` were played in, by game id (a `games.origins.Origins`, which the
    site's wiring hands the board pages): a link to each race and the player's final
    place; games of no race are left out. One query."""
    racers = (
        Racer.objects.filter(game__in=[game.pk for game in games])
        .select_related("race")
        .annotate(players=Count("race__racers"))
        .only("game_id", "rank", "race__code")
    )
    return {
        racer.game_id: GameOrigin(
            kind="race",
            label=gettext("Race"),
            url=reverse("race", args=[racer.race.code]),
            place=racer.rank,
            players=racer.players,
        )
        for racer in racers
        if racer.game_id is not None
    }


def racer_get(*, race: Race, player: User) -> Racer | None:
    """The player's place in the race, or None when they are not in it."""
    return Racer.objects.filter(race=race, player=player).first()


def player_races(*, player: User, limit: int = 20, ended: bool = False) -> list[dict[str, Any]]:
    """The player's races, newest first: each with its status, players, winner, and
    the player's place, result and game (once over). `ended`: only the races whose
    end is stored and that were played (a lobby's link is its invitation: not shown)."""
    racers = Racer.objects.filter(player=player)
    if ended:
        racers = racers.filter(race__ended_at__isnull=False).exclude(race__end=Race.End.CANCELLED)
    racers = (
        racers.select_related("race", "race__winner")
        .annotate(players=Count("race__racers"))
        .order_by("-joined_at", "-id")[:limit]
    )
    now = timezone.now()
    return [
        {
            "code": racer.race.code,
            "created_at": racer.race.created_at,
            "status": racer.race.status(now),
            "end": racer.race.end,
            "time_limit_s": int(racer.race.time_limit.total_seconds()),
            "players": racer.players,
            "winner": racer.race.winner.get_username() if racer.race.winner else None,
            "place": racer.rank,
            "score": racer.score,
            "moves": racer.moves,
            "won": racer.won,
            "game": racer.game_id,
        }
        for racer in racers
    ]


def race_invited(*, race: Race) -> list[str]:
    """The players of the race `race` is the rematch of who have not joined it yet."""
    joined = race.racers.values("player_id")
    return list(
        Racer.objects.filter(race__rematch=race)
        .exclude(player_id__in=joined)
        .order_by("joined_at", "id")
        .values_list("player__username", flat=True)
    )
