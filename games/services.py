"""Writes of the daily challenge: prepare the days' deals, submit and void games.

Services are the only place that changes deals and games. Each one is typed,
takes keyword-only arguments and runs in one transaction. A stored or voided
game is announced with `games.signals` inside that transaction, so that what
ranks games (the `leaderboards` app, which builds on this one) changes in the
same commit, and nothing is announced that did not happen.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import logging
from collections.abc import Iterator, Sequence
from dataclasses import replace

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework import status

from easyharp_site.errors import ServiceError
from games import rules, signals, solver
from games.models import DailyDeal, Game
from games.parsing import deal_parse, log_replay, log_tokens

logger = logging.getLogger(__name__)

# How many candidates of one day are tried before the first one is taken anyway
# (the solver wins almost every deal; this bounds the time if it does not).
DAILY_DEAL_MAX_CANDIDATES = 20


# --- Deal of the day -------------------------------------------------------------


def daily_deal_candidates(date: datetime.date) -> Iterator[int]:
    """The deterministic sequence of deal numbers tried for `date`.

    HMAC-SHA256 keyed with DAILY_DEAL_SALT, so the sequence cannot be computed
    without the secret.
    """
    key = settings.DAILY_DEAL_SALT.encode()
    attempt = 0
    while True:
        digest = hmac.new(key, f"{date.isoformat()}:{attempt}".encode(), hashlib.sha256).digest()
        yield int.from_bytes(digest[:8], "big") % rules.DEAL_MAX + 1
        attempt += 1


def daily_deal_is_acceptable(number: int) -> tuple[bool, int | None]:
    """Whether deal `number` may be a deal of the day, and its par if known.

    With DAILY_DEAL_REQUIRE_WIN on, a deal is acceptable only when the solver
    wins it with the par's work (`solver.PAR`, deciding within
    DAILY_DEAL_SOLVER_NODES positions); the par is the move count of that win
    (a score to beat, not a proven minimum). The work is counted, so the par is
    the same on any machine. DAILY_DEAL_SOLVER_SECONDS only caps the time: a
    candidate whose work the cap cut short is passed over, so a stored par is
    always the full work's. With the setting off every deal is accepted, with
    no par.
    """
    if not settings.DAILY_DEAL_REQUIRE_WIN:
        return True, None
    solution = solver.solve(
        rules.Deal(number),
        work=replace(solver.PAR, decide=settings.DAILY_DEAL_SOLVER_NODES),
        seconds=settings.DAILY_DEAL_SOLVER_SECONDS,
    )
    if solution.cut_short:
        logger.warning(
            "deal %s passed over: the solver's work was cut short after %.1f s "
            "(DAILY_DEAL_SOLVER_SECONDS)",
            number,
            solution.seconds,
        )
        return False, None
    if solution.result == "won":
        return True, solution.moves
    return False, None


def daily_deal_store(*, date: datetime.date) -> DailyDeal:
    """Choose and store the deal of `date` unless it is stored already (any date).

    Not wrapped in one transaction on purpose: the solver may take seconds per
    candidate and must not hold a transaction open; the unique date makes a
    race between two first requests harmless (the loser reads the winner's row).
    """
    existing = DailyDeal.objects.filter(date=date).first()
    if existing is not None:
        return existing
    number, par = _daily_deal_choose(date)
    try:
        with transaction.atomic():
            return DailyDeal.objects.create(date=date, number=number, par=par)
    except IntegrityError:
        return DailyDeal.objects.get(date=date)


def _daily_deal_choose(date: datetime.date) -> tuple[int, int | None]:
    first: int | None = None
    for attempt, number in enumerate(daily_deal_candidates(date)):
        if first is None:
            first = number
        acceptable, par = daily_deal_is_acceptable(number)
        if acceptable:
            return number, par
        if attempt + 1 >= DAILY_DEAL_MAX_CANDIDATES:
            break
    logger.warning("no acceptable deal among %s candidates for %s", DAILY_DEAL_MAX_CANDIDATES, date)
    assert first is not None
    return first, None


# --- Games -------------------------------------------------------------------------


def _request_digest(deal_number: int, tokens: Sequence[str]) -> str:
    return hashlib.sha256(f"{deal_number}\n{' '.join(tokens)}".encode()).hexdigest()


def _player_lock(player: User) -> None:
    """Serialise one player's writes (their board rows and idempotency keys).

    Locks the player's row until the transaction ends; other players are not
    held up.
    """
    get_user_model().objects.select_for_update().filter(pk=player.pk).values_list("pk").first()


@transaction.atomic
def game_submit(
    *,
    player: User,
    deal: str,
    log: str | Sequence[str],
    idempotency_key: str | None = None,
) -> tuple[Game, bool]:
    """Validate a game with the rules engine and store it; returns (game, created).

    The server replays the log itself and stores its own score, moves, win and
    action count. A refused log raises `illegal_action` with the engine's index,
    token and reason, and stores nothing. With an `idempotency_key` already used
    by this player for the same deal and log, the first game is returned with
    `created` False; for another deal or log the key is refused.

    The game counts for today's boards when its deal is today's deal (UTC).
    """
    parsed_deal = deal_parse(deal)
    tokens = log_tokens(log)
    if not tokens:
        raise ServiceError("empty_log", "The log holds no action.")
    digest = _request_digest(parsed_deal.number, tokens)

    now = timezone.now()
    # Days are prepared ahead (`daily_deals_prepare`); a submission never chooses one.
    today = DailyDeal.objects.filter(date=now.date()).first()

    _player_lock(player)
    if idempotency_key is not None:
        earlier = Game.objects.filter(player=player, idempotency_key=idempotency_key).first()
        if earlier is not None:
            if earlier.request_digest != digest:
                raise ServiceError(
                    "idempotency_key_reused",
                    "This Idempotency-Key was already used for another deal or log.",
                    status_code=status.HTTP_409_CONFLICT,
                    game=earlier.pk,
                )
            return earlier, False

    played = log_replay(parsed_deal, tokens)

    game = Game.objects.create(
        player=player,
        deal_number=parsed_deal.number,
        log=" ".join(str(token) for token in played.log),
        score=played.score,
        moves=played.moves,
        won=played.is_won,
        actions=len(played.log),
        rules_version=rules.RULES_VERSION,
        daily=today if today is not None and today.number == parsed_deal.number else None,
        created_at=now,
        idempotency_key=idempotency_key,
        request_digest=digest,
    )
    signals.game_stored.send(sender=Game, game=game)
    return game, True


@transaction.atomic
def game_void(*, game: Game, reason: str = "") -> Game:
    """Void a game: it leaves every board at once (the player's best is recomputed).

    Voiding a voided game changes nothing.
    """
    _player_lock(game.player)
    game = Game.objects.select_related("daily").get(pk=game.pk)
    if game.is_voided:
        return game
    game.voided_at = timezone.now()
    game.void_reason = reason[:200]
    game.save(update_fields=["voided_at", "void_reason"])
    signals.game_voided.send(sender=Game, game=game)
    return game


def daily_deals_prepare(*, first: datetime.date, days: int) -> list[tuple[DailyDeal, bool]]:
    """Store the deals of `days` days from `first` on; (day, newly stored) for each.

    The one way a day comes to exist: pages and the API only read days, so
    this runs ahead of time (compose's `deals` job, `prepare_daily_deals`, or
    the server's own background thread in the embedded default).
    """
    prepared = []
    for offset in range(days):
        date = first + datetime.timedelta(days=offset)
        stored = DailyDeal.objects.filter(date=date).first()
        prepared.append((stored, False) if stored else (daily_deal_store(date=date), True))
    return prepared
