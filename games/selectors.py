"""Reads of deals, games and players. Reads never write: no selector stores
anything or chooses a day (days are prepared ahead by `services.daily_deals_prepare`)."""

from __future__ import annotations

import datetime
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet
from django.utils.translation import gettext_noop
from rest_framework import status

from easyharp_site.dates import today
from easyharp_site.errors import ServiceError
from games import rules
from games.models import Attempt, DailyDeal, Game, ReviewState
from games.parsing import deal_parse, illegal_action, log_tokens
from games.pool import Requester, heavy_run
from games.solver import Hint
from games.work import hint_find

logger = logging.getLogger(__name__)


def daily_deal_first_date() -> datetime.date:
    """The first day the service serves (setting DAILY_DEAL_FIRST_DATE)."""
    first: datetime.date = settings.DAILY_DEAL_FIRST_DATE
    return first


def daily_day_number(date: datetime.date) -> int:
    """The number of `date` in the daily series: 1 on DAILY_DEAL_FIRST_DATE, counting
    every calendar day since (so #336 is the 336th day served, whatever was played)."""
    return (date - daily_deal_first_date()).days + 1


def daily_deal_get(*, date: datetime.date) -> DailyDeal:
    """The stored deal of `date`, or a 404 error saying why there is none.

    Future days are never served (`day_not_open`), nor days before
    DAILY_DEAL_FIRST_DATE (`day_not_served`); a served day whose deal is not
    prepared yet is `day_not_prepared` (the preparing job is behind; for a day
    gone by, the service was not running then, and the message says so).
    """
    if date > today():
        raise ServiceError(
            "day_not_open",
            gettext_noop("The deal of {date} is not served before that day."),
            status_code=status.HTTP_404_NOT_FOUND,
            words={"date": date.isoformat()},
        )
    if date < daily_deal_first_date():
        raise ServiceError(
            "day_not_served",
            gettext_noop("There is no deal of the day before {date}."),
            status_code=status.HTTP_404_NOT_FOUND,
            words={"date": daily_deal_first_date().isoformat()},
        )
    day = DailyDeal.objects.filter(date=date).first()
    if day is None:
        raise ServiceError(
            "day_not_prepared",
            gettext_noop("The deal of {date} is not prepared yet; try again in a minute.")
            if date == today()
            else gettext_noop("There was no deal of the day on {date}: nobody played that day."),
            status_code=status.HTTP_404_NOT_FOUND,
            words={"date": date.isoformat()},
        )
    return day


def daily_deal_before(*, number: int, before: datetime.date) -> DailyDeal | None:
    """The last day before `before` whose deal was deal `number`, or None: a past day's
    deal played again from the archive is that day's, as practice."""
    return DailyDeal.objects.filter(number=number, date__lt=before).order_by("-date").first()


def daily_deals_served(*, until: datetime.date) -> QuerySet[DailyDeal]:
    """The stored days up to `until`, newest first."""
    return DailyDeal.objects.filter(date__lte=until).order_by("-date")


def deal_start(*, code: str) -> dict[str, Any]:
    """`{code, number, table}` of a deal: its starting table as the engine shows it.

    A code that cannot be read is a 404 `invalid_deal` saying what is wrong.
    """
    try:
        deal = rules.Deal.from_code(code)
    except rules.InvalidDealError as error:
        raise ServiceError(
            "invalid_deal",
            rules.DEAL_REASONS[error.code],
            status_code=status.HTTP_404_NOT_FOUND,
            words=error.params,
        ) from None
    return {"code": deal.code, "number": deal.number, "table": rules.Game(deal).table()}


def game_get(*, game_id: int) -> Game:
    """The game `game_id` (voided ones too: a replay stays public), or a 404 error."""
    game = Game.objects.select_related("player", "daily").filter(pk=game_id).first()
    if game is None:
        raise ServiceError(
            "not_found",
            gettext_noop("There is no game {game}."),
            status_code=status.HTTP_404_NOT_FOUND,
            words={"game": game_id},
        )
    return game


# --- The no-spoiler rule ----------------------------------------------------------


@dataclass(frozen=True)
class ReplayLock:
    """Why the games of a deal are not shown to a viewer yet, and when they will be.

    While a day runs, the logs of its deal (ranked and practice games, replays,
    hints) reach only the players who have finished their own ranked attempt
    of that day, and each player their own games; everyone once the day has
    closed (docs/FAIR_PLAY.md).
    """

    date: datetime.date
    deal_number: int
    opens_at: datetime.datetime

    @property
    def ahead(self) -> bool:
        """Whether the day is prepared ahead, not open yet: its date and deal are secret."""
        return self.date > today()

    def error(self, what: str) -> ServiceError:
        """The 403 `replay_locked` refusal of `what` (a game, a hint...). A day prepared
        ahead is not named: the refusal would tell whose deal it is."""
        if self.ahead:
            return ServiceError(
                "replay_locked",
                gettext_noop("{what} is not shown yet."),
                status_code=status.HTTP_403_FORBIDDEN,
                words={"what": what},
            )
        return ServiceError(
            "replay_locked",
            f"{what} plays the deal of {self.date.isoformat()}, which is still running: "
            "its games open once you have played your ranked game of that day (submitted "
            f"or given up), or for everyone at {self.opens_at:%Y-%m-%d %H:%M} UTC when the "
            "day closes.",
            status_code=status.HTTP_403_FORBIDDEN,
            date=self.date.isoformat(),
            opens_at=self.opens_at.isoformat().replace("+00:00", "Z"),
        )


def running_days() -> list[DailyDeal]:
    """The days not yet closed: today's, and any prepared ahead (their deals are secret)."""
    return list(DailyDeal.objects.filter(date__gte=today()))


def replay_locks(
    *, viewer: User | AnonymousUser, days: list[DailyDeal] | None = None
) -> dict[int, ReplayLock]:
    """The deals whose games `viewer` may not see yet, by deal number: each running
    (or prepared future) day's deal whose ranked attempt the viewer has not finished.

    Two indexed reads whatever the viewer looks at (one when the caller has read
    `running_days()` already); empty once every day the viewer could be spoiled
    on is closed or finished.
    """
    days = running_days() if days is None else days
    if not days:
        return {}
    finished: set[int] = set()
    if viewer.is_authenticated:
        finished = set(
            Game.objects.filter(player=viewer, ranked=True, daily__in=days).values_list(
                "daily_id", flat=True
            )
        )
    return {
        day.number: ReplayLock(date=day.date, deal_number=day.number, opens_at=day.closes_at)
        for day in days
        if day.pk not in finished
    }


def day_lock(*, date: datetime.date, viewer: User | AnonymousUser) -> ReplayLock | None:
    """The lock on the games of `date`'s deal for `viewer`, or None when they may see them."""
    if date < today():
        return None
    return next((lock for lock in replay_locks(viewer=viewer).values() if lock.date == date), None)


def game_lock(
    *, game: Game, viewer: User | AnonymousUser, locks: dict[int, ReplayLock] | None = None
) -> ReplayLock | None:
    """The lock that keeps `game`'s log from `viewer`, or None when they may see it.

    A player always sees their own games. `locks` is `replay_locks(viewer=viewer)`
    when the caller has it already (a page of many games reads it once).
    """
    if viewer.is_authenticated and viewer.pk == game.player_id:
        return None
    if locks is None:
        locks = replay_locks(viewer=viewer)
    return locks.get(game.deal_number)


def game_get_unlocked(*, game_id: int, viewer: User | AnonymousUser) -> tuple[Game, bool]:
    """The game `game_id` with its log, or a 404, or a 403 `replay_locked` for `viewer`;
    and whether its log is still private (its day runs: not for a shared cache)."""
    game = game_get(game_id=game_id)
    days = running_days()
    lock = game_lock(game=game, viewer=viewer, locks=replay_locks(viewer=viewer, days=days))
    if lock is not None:
        raise lock.error(f"Game {game.pk}")
    return game, any(day.number == game.deal_number for day in days)


def hint_lock(*, deal: str, viewer: User | AnonymousUser) -> ReplayLock | None:
    """The lock that keeps the solver's hints on `deal` from `viewer`, or None.

    Hints on a running day's deal are the day's answer: they are given only to a
    player during their ranked attempt (which they mark assisted) or after it.
    """
    number = deal_parse(deal).number
    lock = replay_locks(viewer=viewer).get(number)
    if lock is None or not viewer.is_authenticated:
        return lock
    attempt_open = Attempt.objects.filter(
        player=viewer, daily__date=lock.date, game__isnull=True
    ).exists()
    return None if attempt_open else lock


def par_lock(*, daily: DailyDeal) -> ReplayLock | None:
    """The lock on `daily`'s par line (the solver's win), or None once the day has closed.

    The solver's line is the day's answer: it is shown to no one, whoever has
    played, until the day closes.
    """
    if daily.date < today():
        return None
    return ReplayLock(date=daily.date, deal_number=daily.number, opens_at=daily.closes_at)


def par_get_unlocked(*, date: datetime.date) -> DailyDeal:
    """The closed day `date` with its par line, or a 404 (no day, or no par line), or a
    403 `replay_locked` while the day runs."""
    daily = daily_deal_get(date=date)
    lock = par_lock(daily=daily)
    if lock is not None:
        raise ServiceError(
            "replay_locked",
            gettext_noop(
                "The solver's line of {date} is the day's answer: it is shown to everyone "
                "at {opens_at} UTC, when the day closes."
            ),
            status_code=status.HTTP_403_FORBIDDEN,
            words={"date": date.isoformat(), "opens_at": f"{lock.opens_at:%Y-%m-%d %H:%M}"},
            date=date.isoformat(),
            opens_at=lock.opens_at.isoformat().replace("+00:00", "Z"),
        )
    if not daily.par_log:
        raise ServiceError(
            "no_par",
            gettext_noop("The solver found no line for the deal of {date}."),
            status_code=status.HTTP_404_NOT_FOUND,
            words={"date": date.isoformat()},
        )
    return daily


@dataclass(frozen=True)
class ParResult:
    """What the par line of a day comes to, as the engine replays it."""

    score: int
    moves: int
    actions: int


def par_result(*, daily: DailyDeal) -> ParResult | None:
    """The score and moves of `daily`'s par line, or None when the solver did not run.

    Replayed by the engine here: a par line is a few hundred actions, a
    millisecond's work.
    """
    if not daily.par_log:
        return None
    played = rules.replay(daily.number, daily.par_log)
    return ParResult(score=played.score, moves=played.moves, actions=len(daily.par_log.split()))


def game_held_for(*, game: Game, viewer: Any) -> bool:
    """Whether `viewer` (a user, maybe anonymous) is told that `game` is held for review:
    only its own player is, while it waits off the boards for a moderator."""
    return game.review_state == ReviewState.HELD and viewer.pk == game.player_id


def attempt_get(*, player: User, date: datetime.date) -> Attempt:
    """The player's ranked attempt of `date`, or a 404 `no_attempt`."""
    attempt = (
        Attempt.objects.select_related("daily", "game")
        .filter(player=player, daily__date=date)
        .first()
    )
    if attempt is None:
        raise ServiceError(
            "no_attempt",
            f"You have not started the ranked attempt of {date.isoformat()}.",
            status_code=status.HTTP_404_NOT_FOUND,
            expected=True,
        )
    return attempt


def ranked_game_of(*, player: User, date: datetime.date) -> Game | None:
    """The player's ranked game of `date` (assisted, held or voided too), or None."""
    return (
        Game.objects.select_related("daily", "player")
        .filter(player=player, ranked=True, daily__date=date)
        .first()
    )


def attempt_is_started(*, player: User, date: datetime.date) -> bool:
    """Whether the player has started the ranked attempt of `date` (open or submitted)."""
    return Attempt.objects.filter(player=player, daily__date=date).exists()


def attempt_is_open(*, player: User, date: datetime.date) -> bool:
    """Whether the player has started the ranked attempt of `date` and not submitted it."""
    return Attempt.objects.filter(player=player, daily__date=date, game__isnull=True).exists()


def player_get(*, username: str) -> User:
    """The active player named `username`, or a 404 error."""
    player = get_user_model().objects.filter(username=username, is_active=True).first()
    if player is None:
        raise ServiceError(
            "not_found",
            gettext_noop("There is no player {player}."),
            status_code=status.HTTP_404_NOT_FOUND,
            words={"player": repr(username)},
        )
    return player


def player_games(*, player: User, limit: int = 20) -> QuerySet[Game]:
    """The player's most recent games, newest first."""
    return Game.objects.filter(player=player).select_related("player", "daily")[:limit]


def game_hint(*, deal: str, log: str | Sequence[str], requester: Requester) -> Hint:
    """The solver's hint for the table after `log` in `deal`, worked out in the heavy
    work pool in `requester`'s turn.

    The hint's work is fixed (`solver.HINT`, deciding within HINT_SOLVER_NODES
    positions), so the same table always gets the same hint; HINT_SOLVER_SECONDS
    only caps the time (the answer then says `cut_short`).

    A deal code that cannot be read is a 400 `invalid_deal`, a log longer than
    GAME_MAX_ACTIONS a 400 `log_too_long`, and a refused log a 400
    `illegal_action` with its index, token and reason, as for a submission.
    """
    parsed_deal = deal_parse(deal)
    tokens = log_tokens(log)
    try:
        # In the heavy work pool: seconds of CPU, away from the server process.
        return heavy_run(
            hint_find,
            requester=requester,
            deal_number=parsed_deal.number,
            tokens=tokens,
            decide=settings.HINT_SOLVER_NODES,
            seconds=settings.HINT_SOLVER_SECONDS,
        )
    except rules.ActionError as error:
        raise illegal_action(error) from None


def daily_deal_neighbours(
    *, date: datetime.date, until: datetime.date
) -> tuple[datetime.date | None, datetime.date | None]:
    """The stored days just before and just after `date` (the latter no later than `until`)."""
    before = DailyDeal.objects.filter(date__lt=date).order_by("-date").first()
    after = DailyDeal.objects.filter(date__gt=date, date__lte=until).order_by("date").first()
    return (before.date if before else None, after.date if after else None)


def player_games_export(*, player: User) -> list[dict[str, Any]]:
    """Every game of the player, oldest first, as the export lists them (JSON-ready).

    Voided games are listed too (with when and why); `ranked` tells whether a
    game was the player's ranked game of its day (`daily`) or practice, with
    `assisted`, the server-measured `duration_ms` and the per-action `times`.
    """
    games = Game.objects.filter(player=player).select_related("daily").order_by("created_at", "id")
    return [
        {
            "id": game.pk,
            "deal": game.deal_code,
            "deal_number": game.deal_number,
            "ranked": game.ranked,
            "assisted": game.assisted,
            "duration_ms": game.duration_ms,
            "times": game.times,
            "daily": game.daily.date.isoformat() if game.daily is not None else None,
            "log": game.log,
            "actions": game.actions,
            "score": game.score,
            "moves": game.moves,
            "won": game.won,
            "rules_version": game.rules_version,
            "submitted_at": game.created_at.isoformat(),
            "voided_at": game.voided_at.isoformat() if game.voided_at is not None else None,
            "void_reason": game.void_reason,
        }
        for game in games.iterator(chunk_size=500)
    ]


def attempt_watchable(*, player: User, viewer: User | AnonymousUser) -> bool:
    """Whether `viewer` may watch `player`'s ranked attempt of today live now: it is open,
    and the viewer may see today's games (`day_lock`), or is the player."""
    day = today()
    if not viewer.is_authenticated or not attempt_is_open(player=player, date=day):
        return False
    return viewer.pk == player.pk or day_lock(date=day, viewer=viewer) is None


def player_ranked_dates(*, player: User) -> list[datetime.date]:
    """The days of the player's ranked games, in order."""
    dates = (
        Game.objects.filter(player=player, ranked=True, daily__isnull=False)
        .values_list("daily__date", flat=True)
        .distinct()
    )
    return sorted(dates)
