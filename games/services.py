"""Writes of the daily challenge: open a day, register players, submit and void games.

Services are the only place that changes games and boards. Each one is typed,
takes keyword-only arguments and runs in one transaction; the live-board hook
is scheduled with `transaction.on_commit`, so nothing is announced that did
not happen.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import logging
from collections.abc import Collection, Iterator, Sequence
from functools import partial

from django.conf import settings
from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework import status
from rest_framework.authtoken.models import Token

from games import rules, solver
from games.exceptions import ServiceError, illegal_action
from games.models import DailyDeal, Game
from leaderboards import live
from leaderboards.services import board_entries_offer, board_entries_recompute

logger = logging.getLogger(__name__)

DEAL_NUMBER_MAX = 999_999
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
        yield int.from_bytes(digest[:8], "big") % DEAL_NUMBER_MAX + 1
        attempt += 1


def daily_deal_is_acceptable(number: int) -> tuple[bool, int | None]:
    """Whether deal `number` may be a deal of the day, and its par if known.

    With DAILY_DEAL_REQUIRE_WIN on, a deal is acceptable only when the solver
    wins it within DAILY_DEAL_SOLVER_SECONDS; the par is the move count of the
    win it found (a score to beat, not a proven minimum). With it off every
    deal is accepted, with no par.
    """
    if not settings.DAILY_DEAL_REQUIRE_WIN:
        return True, None
    solution = solver.solve(rules.Deal(number), seconds=settings.DAILY_DEAL_SOLVER_SECONDS)
    if solution.result == "won":
        return True, solution.moves
    return False, None


def daily_deal_first_date() -> datetime.date:
    """The first day the service serves (setting DAILY_DEAL_FIRST_DATE)."""
    return datetime.date.fromisoformat(settings.DAILY_DEAL_FIRST_DATE)


def daily_deal_get_or_create(*, date: datetime.date) -> DailyDeal:
    """The deal of `date`, chosen and stored the first time it is asked for.

    Future dates, and dates before DAILY_DEAL_FIRST_DATE, are refused with a 404
    error (`prepare_daily_deals` stores days ahead; they are served from their
    day on).
    """
    today = timezone.now().date()
    if date > today:
        raise ServiceError(
            "day_not_open",
            f"The deal of {date.isoformat()} is not served before that day.",
            status_code=status.HTTP_404_NOT_FOUND,
        )
    if date < daily_deal_first_date():
        raise ServiceError(
            "day_not_served",
            f"There is no deal of the day before {daily_deal_first_date().isoformat()}.",
            status_code=status.HTTP_404_NOT_FOUND,
        )
    return daily_deal_store(date=date)


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


# --- Players -----------------------------------------------------------------------


def player_register(*, username: str, password: str) -> tuple[User, str]:
    """Create a player and their API token; returns (player, token key).

    The username must be free (compared without case); the password must pass
    Django's validators. The password is hashed before any database work: the
    hash costs about half a second of CPU, and a request holds its database
    connection from its first query to its end, so hashing after one let a
    burst of sign-ups hold every pooled connection (bench/load.py).
    """
    user_model = get_user_model()
    # Compare the name as it will be stored: create_user() applies NFKC, so
    # "ａｌｉｃｅ" (full-width) would otherwise slip past the check as "alice".
    username = user_model.normalize_username(username)
    candidate = user_model(username=username)
    try:
        validate_password(password, user=candidate)
    except ValidationError as error:
        raise ServiceError(
            "invalid_password", " ".join(error.messages), problems=list(error.messages)
        ) from None
    candidate.set_password(password)
    return _player_store(player=candidate)


@transaction.atomic
def _player_store(*, player: User) -> tuple[User, str]:
    username = player.get_username()
    taken = ServiceError(
        "username_taken",
        f"The username {username!r} is taken.",
        status_code=status.HTTP_409_CONFLICT,
    )
    if get_user_model().objects.filter(username__iexact=username).exists():
        raise taken
    try:
        with transaction.atomic():
            player.save()
    except IntegrityError:
        # Two sign-ups for the same name at once: the second one loses here.
        raise taken from None
    token = Token.objects.create(user=player)
    return player, token.key


def player_authenticate(*, username: str, password: str) -> User:
    """The active player with these credentials, or an `invalid_credentials` error."""
    player = authenticate(username=username, password=password)
    if player is None:
        raise ServiceError(
            "invalid_credentials",
            "Unknown username or wrong password.",
            status_code=status.HTTP_401_UNAUTHORIZED,
        )
    return player


@transaction.atomic
def player_token_get_or_create(*, username: str, password: str) -> str:
    """The API token of the player with these credentials (created on first use)."""
    player = player_authenticate(username=username, password=password)
    token, _ = Token.objects.get_or_create(user=player)
    return str(token.key)


# --- Games -------------------------------------------------------------------------


def deal_parse(code: str) -> rules.Deal:
    """The deal of `code`; a code that cannot be read is a 400 `invalid_deal`."""
    try:
        return rules.Deal.from_code(code)
    except ValueError as error:
        raise ServiceError("invalid_deal", str(error)) from None


def log_tokens(log: str | Sequence[str]) -> list[str]:
    """The tokens of a log given as text or as a list, upper-cased, blanks dropped.

    Only ASCII tokens are upper-cased: Python's upper() turns some other letters
    into ASCII ones ("ſ" into "S"), and the engine must see and refuse them as
    written. A log longer than GAME_MAX_ACTIONS is a 400 `log_too_long`.
    """
    # A list entry with blanks inside ("3 7") is two tokens, as it would be in text.
    words = log.split() if isinstance(log, str) else [w for item in log for w in item.split()]
    tokens = [word.upper() if word.isascii() else word for word in words]
    max_actions: int = settings.GAME_MAX_ACTIONS
    if len(tokens) > max_actions:
        raise ServiceError(
            "log_too_long",
            f"A log may hold at most {max_actions} actions; this one has {len(tokens)}.",
            max_actions=max_actions,
            actions=len(tokens),
        )
    return tokens


def _request_digest(deal_number: int, tokens: Sequence[str]) -> str:
    return hashlib.sha256(f"{deal_number}\n{' '.join(tokens)}".encode()).hexdigest()


def _player_lock(player: User) -> None:
    """Serialise one player's writes (their board rows and idempotency keys).

    Locks the player's row until the transaction ends; other players are not
    held up.
    """
    get_user_model().objects.select_for_update().filter(pk=player.pk).values_list("pk").first()


def _announce(date: datetime.date, orders: Collection[str]) -> None:
    if orders:
        transaction.on_commit(partial(live.board_changed, date=date, orders=tuple(orders)))


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
    # Before the player's lock: the first request of a day may wait for the solver.
    try:
        today: DailyDeal | None = daily_deal_get_or_create(date=now.date())
    except ServiceError:
        today = None  # no day is served today (before DAILY_DEAL_FIRST_DATE)

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

    try:
        played = rules.replay(parsed_deal, tokens)
    except rules.ActionError as error:
        raise illegal_action(error) from None

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
    if game.daily is not None:
        _announce(game.daily.date, board_entries_offer(game=game))
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
    if game.daily is not None:
        _announce(
            game.daily.date, board_entries_recompute(player=game.player, date=game.daily.date)
        )
    return game
