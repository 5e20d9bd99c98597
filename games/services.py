"""Writes of the daily challenge: prepare the days' deals, run each player's ranked
attempt, store games, and the games' side of what moderators do (void, clear, ban).

Services are the only place that changes deals, attempts and games. Each one
is typed, takes keyword-only arguments and runs in one transaction. What is
derived from games (the boards, their mirror, the players' records, the
leagues' settled days, the races) is kept by the apps above this one: a game
stored, voided or cleared, or a player banned, goes through `ranking.actions`,
which calls these and then each derived store, in one transaction.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Sum
from django.utils import timezone
from django.utils.translation import gettext_noop
from rest_framework import status

from easyharp_site.dates import today, utc_aware
from easyharp_site.errors import ServiceError
from easyharp_site.steps import Steps, steps_lock, steps_run, steps_run_on_loop
from games import live, rules, solver
from games.models import Attempt, DailyDeal, Game, ModerationAction, ReviewState
from games.parsing import deal_parse, log_replay, log_tokens, times_check
from games.review import review_game, steps_of
from games.selectors import attempt_get, daily_deal_get

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


def daily_deal_is_acceptable(number: int) -> tuple[bool, int | None, str]:
    """Whether deal `number` may be a deal of the day, its par if known, and the solver's line.

    With DAILY_DEAL_REQUIRE_WIN on, a deal is acceptable only when the solver
    wins it with the par's work (`solver.PAR`, deciding within
    DAILY_DEAL_SOLVER_NODES positions); the par is the move count of that win
    (a score to beat, not a proven minimum) and the line its log, kept so that
    submissions can be compared with it without running the solver again. The
    work is counted, so the par is the same on any machine.
    DAILY_DEAL_SOLVER_SECONDS only caps the time: a candidate whose work the
    cap cut short is passed over, so a stored par is always the full work's.
    With the setting off every deal is accepted, with no par and no line.
    """
    if not settings.DAILY_DEAL_REQUIRE_WIN:
        return True, None, ""
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
        return False, None, ""
    if solution.result == "won":
        return True, solution.moves, " ".join(solution.log)
    return False, None, ""


def daily_deal_store(*, date: datetime.date) -> DailyDeal:
    """Choose and store the deal of `date` unless it is stored already (any date).

    Not wrapped in one transaction on purpose: the solver may take seconds per
    candidate and must not hold a transaction open; the unique date makes a
    race between two first requests harmless (the loser reads the winner's row).
    """
    existing = DailyDeal.objects.filter(date=date).first()
    if existing is not None:
        return existing
    number, par, line = _daily_deal_choose(date)
    try:
        with transaction.atomic():
            return DailyDeal.objects.create(date=date, number=number, par=par, par_log=line)
    except IntegrityError:
        return DailyDeal.objects.get(date=date)


def _daily_deal_choose(date: datetime.date) -> tuple[int, int | None, str]:
    first: int | None = None
    for tried, number in enumerate(daily_deal_candidates(date)):
        if first is None:
            first = number
        acceptable, par, line = daily_deal_is_acceptable(number)
        if acceptable:
            return number, par, line
        if tried + 1 >= DAILY_DEAL_MAX_CANDIDATES:
            break
    logger.warning("no acceptable deal among %s candidates for %s", DAILY_DEAL_MAX_CANDIDATES, date)
    assert first is not None
    return first, None, ""


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


# --- One player's writes ----------------------------------------------------------


def _player_lock(player: User) -> bool:
    """Serialise one player's writes (their attempt, board rows and idempotency keys).

    Locks the player's row until the transaction ends (other players are not
    held up) and returns whether the account is active, read under the lock.
    """
    # A plain statement: it runs in every write of a player, where the ORM's
    # building of it cost twice the statement (docs/PERFORMANCE.md).
    users = get_user_model()._meta.db_table
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT is_active FROM {users} WHERE id = %s{lock}", [player.pk])
        row = cursor.fetchone()
    return row is not None and bool(row[0])


def _active_player_lock(player: User) -> None:
    """`_player_lock`, refusing a banned player (their sign-in may predate the ban)."""
    if not _player_lock(player):
        raise ServiceError(
            "player_banned",
            "This account is banned: it can no longer play ranked games or submit.",
            status_code=status.HTTP_403_FORBIDDEN,
        )


def _elapsed_ms(since: datetime.datetime, now: datetime.datetime) -> int:
    return max(0, int((now - since).total_seconds() * 1000))


# --- The ranked attempt ------------------------------------------------------------

# Saves kept per attempt for review (a page saving every few seconds keeps
# more than an hour of play); later saves replace the last one kept.
ATTEMPT_SAVES_KEPT = 2_000


def _day_open_check(day: DailyDeal) -> None:
    if day.date != today():
        raise ServiceError(
            "day_closed",
            f"The day {day.date.isoformat()} is over: its ranked attempt can no longer "
            f"be started or played.",
            status_code=status.HTTP_409_CONFLICT,
        )


@transaction.atomic
def attempt_start(*, player: User, date: datetime.date) -> tuple[Attempt, bool]:
    """Start the player's ranked attempt of `date` (today only); returns (attempt, created).

    The server's clock starts now. A second call, from any device, returns
    the same attempt, open or closed: one attempt per player and day, however
    many requests race (the player's lock, and a unique constraint behind it).
    """
    day = daily_deal_get(date=date)
    _day_open_check(day)
    _active_player_lock(player)
    attempt = Attempt.objects.select_related("game").filter(player=player, daily=day).first()
    if attempt is not None:
        return attempt, False
    return Attempt.objects.create(player=player, daily=day, started_at=timezone.now()), True


@transaction.atomic
def attempt_save(
    *,
    player: User,
    date: datetime.date,
    log: str | Sequence[str],
    version: int | None = None,
) -> Attempt:
    """Save the game so far of the player's open attempt of `date`, validated like a submission.

    `version` is the attempt's version the saving device last saw: the save
    goes through only if it is still the stored one, and makes it one more.
    Without a version (a client that does not track it) a save goes through
    only if it extends the saved log. Anything else is a 409 `stale_save`
    carrying the stored game, so that a device that fell behind can never
    write its older game over a longer one played on another; the exact log
    already saved (a retry whose answer was lost) is answered as it stands,
    whatever the version, and changes nothing.

    A refused log is a 400 `illegal_action` and saves nothing. A closed
    attempt is a 409 `attempt_closed`, a past day's a 409 `day_closed`.
    Each save is kept with its time, the progress that review reads.
    """
    day = daily_deal_get(date=date)
    tokens = log_tokens(log)
    # The engine's replay needs no lock: it depends on the deal alone.
    played = log_replay(rules.Deal(day.number), tokens)
    _active_player_lock(player)
    # Read under the lock: a save of another device a moment ago is seen.
    attempt = attempt_get(player=player, date=date)
    if not attempt.is_open:
        raise ServiceError(
            "attempt_closed",
            "This attempt was submitted; its game is stored and can no longer change.",
            status_code=status.HTTP_409_CONFLICT,
            game=attempt.game.pk,
        )
    _day_open_check(day)
    new_log = [str(token) for token in played.log]
    saved_log = attempt.log.split()
    if new_log == saved_log:
        return attempt
    extends = new_log[: len(saved_log)] == saved_log
    if (version is None and not extends) or (version is not None and version != attempt.version):
        raise _stale_save(attempt, version=version)
    now = timezone.now()
    elapsed = _elapsed_ms(attempt.started_at, now)
    if attempt.times:
        # A streamed attempt keeps a server time per action: the save's for the new ones.
        kept = attempt.action_times()[: _common_length(saved_log, new_log)]
        attempt.times = _times_extended(kept, len(new_log), elapsed)
    attempt.log = " ".join(new_log)
    attempt.saved_at = now
    attempt.version += 1
    _save_point(attempt, elapsed, len(new_log))
    attempt.save(update_fields=["log", "saved_at", "version", "saves", "times"])
    return attempt


def _common_length(first: Sequence[str], second: Sequence[str]) -> int:
    common = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        common += 1
    return common


def _times_extended(times: list[int], length: int, at_ms: int) -> list[int]:
    """`times` with `at_ms` (never before the last of them) for each action up to `length`."""
    last = max(at_ms, times[-1] if times else 0)
    return times + [last] * (length - len(times))


def _save_point(attempt: Attempt, elapsed_ms: int, actions: int) -> None:
    """Keep `[elapsed_ms, actions]` among the attempt's saves (the progress review reads)."""
    point = [elapsed_ms, actions]
    if len(attempt.saves) >= ATTEMPT_SAVES_KEPT:
        attempt.saves[-1] = point
    else:
        attempt.saves.append(point)


@dataclass(frozen=True)
class StreamedSave:
    """A socket's write of its attempt's game (`games.streaming`): the whole game so
    far with the server's receive time of each action, over the stored `version`."""

    attempt_id: int
    player_id: int
    version: int
    log: list[str]
    times: list[int]


@dataclass(frozen=True)
class StreamedSaveResult:
    """`saved` (at `version`), `stale` (another write came first: the stored `log`,
    `times` and `version`), `attempt_closed` (`game`), `day_closed` or `player_banned`."""

    outcome: str
    version: int = 0
    log: list[str] = field(default_factory=list)
    times: list[int] = field(default_factory=list)
    game: int | None = None


# The attempts a group of sockets writes, with what decides whether each write
# goes through: plain SQL, since the ORM's building of these statements cost
# more CPU than the writes (bench/stream.py, docs/PERFORMANCE.md).
_STREAMED_ATTEMPTS_SQL = """
SELECT a.id, a.started_at, a.version, d.date, g.id
FROM games_attempt a JOIN games_dailydeal d ON d.id = a.daily_id
    LEFT JOIN games_game g ON g.attempt_id = a.id
WHERE a.id IN ({ids})
"""
# The stored game of attempts a socket fell behind (rare: another device wrote).
_STREAMED_GAMES_SQL = "SELECT id, log, times, saved_at FROM games_attempt WHERE id IN ({ids})"
# Log and times only: a streamed attempt's progress for review is read off its
# times (`review.steps_of`), so no list of saves grows with each write.
_STREAMED_SAVE_SQL = """
UPDATE games_attempt SET log = %s, times = %s, saved_at = %s, version = %s WHERE id = %s
"""


def _json(value: object) -> object:
    """A JSON column's value as the database hands it over (text from both backends)."""
    return json.loads(value) if isinstance(value, str) else value


def attempts_stream_save(*, saves: Sequence[StreamedSave]) -> list[StreamedSaveResult]:
    """Write the streamed games of many sockets in one transaction; one result per save
    (`_streamed_save_steps` says what goes through). On Django's connection, in a
    thread: the embedded database's way, and any caller's outside a server's loop."""
    return steps_run(_streamed_save_steps(saves, lock=steps_lock()))


async def attempts_stream_save_on_loop(
    *, saves: Sequence[StreamedSave]
) -> list[StreamedSaveResult]:
    """`attempts_stream_save` on a PostgreSQL connection of the running loop
    (`easyharp_site.steps`): no thread, so no wait for the interpreter lock
    between the round trips of a busy server."""
    return await steps_run_on_loop(_streamed_save_steps(saves, lock=True))


def _streamed_save_steps(
    saves: Sequence[StreamedSave], *, lock: bool
) -> Steps[list[StreamedSaveResult]]:
    """The statements of a group of streamed saves, one at a time, for a driver that runs
    them in one transaction and sends back each one's rows; one result per save.

    The sockets checked every action with the engine already, so this only
    writes: each save goes through if its attempt is still at the version
    the socket holds (read under the players' locks, which `PATCH` and a
    submission take too), is open, of today, and its player is not banned.
    One transaction for all of them: the writes of a busy server are grouped
    (`games.batches`), not one per action.
    """
    players = sorted({save.player_id for save in saves})
    ids = sorted({save.attempt_id for save in saves})
    users = get_user_model()._meta.db_table
    # Locked in one order, so that two such writes never wait on each other in a circle.
    marks = ", ".join(["%s"] * len(players))
    for_update = " FOR UPDATE" if lock else ""
    active_rows = yield (
        f"SELECT id, is_active FROM {users} WHERE id IN ({marks}) ORDER BY id{for_update}",
        players,
        False,
    )
    active = {row[0]: bool(row[1]) for row in active_rows}
    attempt_rows = yield (
        _STREAMED_ATTEMPTS_SQL.format(ids=", ".join(["%s"] * len(ids))),
        ids,
        False,
    )
    rows = {row[0]: row for row in attempt_rows}
    now = timezone.now()
    day = now.date()
    written: dict[int, tuple[str, str, datetime.datetime, int, int]] = {}
    results: list[StreamedSaveResult | int] = []
    for save in saves:
        row = rows.get(save.attempt_id)
        if row is None or not active.get(save.player_id, False):
            results.append(StreamedSaveResult("player_banned"))
            continue
        attempt_id, started_at, version, date, game = row
        if game is not None:
            results.append(StreamedSaveResult("attempt_closed", game=game))
        elif date != day:
            results.append(StreamedSaveResult("day_closed"))
        elif version != save.version:
            results.append(attempt_id)  # stale: its stored game is read below
        else:
            version += 1
            # Two sockets of one attempt in one group: the second sees the first's write.
            rows[attempt_id] = (attempt_id, started_at, version, date, None)
            written[attempt_id] = (
                " ".join(save.log),
                json.dumps(save.times),
                now,
                version,
                attempt_id,
            )
            results.append(StreamedSaveResult("saved", version))
    stale_ids = [result for result in results if isinstance(result, int)]
    games: dict[int, tuple[str, Any, datetime.datetime | None]] = {
        attempt_id: (log, times, saved_at)
        for attempt_id, (log, times, saved_at, _, _) in written.items()
        if attempt_id in stale_ids
    }
    unread = sorted(set(stale_ids) - set(games))
    if unread:
        read = yield (
            _STREAMED_GAMES_SQL.format(ids=", ".join(["%s"] * len(unread))),
            unread,
            False,
        )
        for attempt_id, log, times, saved_at in read:
            games[attempt_id] = (log, times, utc_aware(saved_at) if saved_at else None)
    stale = _streamed_games(stale_ids, rows, games)
    if written:
        yield (_STREAMED_SAVE_SQL, list(written.values()), True)
    return [stale[result] if isinstance(result, int) else result for result in results]


def _streamed_games(
    ids: list[int],
    rows: dict[int, tuple[Any, ...]],
    games: dict[int, tuple[str, Any, datetime.datetime | None]],
) -> dict[int, StreamedSaveResult]:
    """The `stale` results of the attempts `ids`: their stored game (`games`: log, times,
    saved_at, written in this group or read) and version."""
    stale = {}
    for attempt_id in ids:
        log, times, saved_at = games[attempt_id]
        stored = Attempt(
            log=log,
            times=_json(times),
            started_at=utc_aware(rows[attempt_id][1]),
            saved_at=saved_at,
        )
        stale[attempt_id] = StreamedSaveResult(
            "stale", rows[attempt_id][2], log=log.split(), times=stored.action_times()
        )
    return stale


def _stale_save(attempt: Attempt, *, version: int | None) -> ServiceError:
    """The 409 of a save that would overwrite a game it has not seen, with the stored game."""
    named = (
        f"names version {version}, but the attempt is at version {attempt.version}"
        if version is not None
        else "does not extend the saved game"
    )
    return ServiceError(
        "stale_save",
        f"This save {named}: another device saved a game this one has not seen. "
        f"Go on from the saved game (`log`, `version`) and save again.",
        status_code=status.HTTP_409_CONFLICT,
        log=attempt.log,
        version=attempt.version,
        actions=len(attempt.log.split()),
    )


@transaction.atomic
def attempt_assist(*, player: User, deal: str) -> bool:
    """Mark the player's open attempt assisted when `deal` is today's deal.

    Called for each hint a signed-in player asks. Returns whether the hint
    was asked during that attempt (its game will be shown as assisted and
    ranked on no board).
    """
    number = deal_parse(deal).number
    day = DailyDeal.objects.filter(date=today()).first()
    if day is None or day.number != number:
        return False
    _player_lock(player)
    attempt = Attempt.objects.filter(player=player, daily=day, game__isnull=True).first()
    if attempt is None:
        return False
    if not attempt.assisted:
        attempt.assisted = True
        attempt.save(update_fields=["assisted"])
        transaction.on_commit(partial(live.attempt_assisted_announce, attempt.pk))
    return True


def _open_attempt(*, player: User, day: DailyDeal) -> Attempt | None:
    """The player's open attempt of `day`, or None. Read after the player's lock, so
    that it sees a submission that just closed it."""
    attempt = Attempt.objects.filter(player=player, daily=day, game__isnull=True).first()
    if attempt is not None:
        attempt.daily = day
    return attempt


# --- Games -------------------------------------------------------------------------


def _request_digest(deal_number: int, tokens: Sequence[str]) -> str:
    return hashlib.sha256(f"{deal_number}\n{' '.join(tokens)}".encode()).hexdigest()


# No savepoint of its own inside a caller's transaction (`ranking.actions`): a
# refusal rolls that transaction back whole. A caller that catches a refusal and
# goes on (a race's end) wraps the call in an atomic block of its own.
@transaction.atomic(savepoint=False)
def game_store(
    *,
    player: User,
    deal: str,
    log: str | Sequence[str],
    idempotency_key: str | None = None,
    times: Sequence[object] | None = None,
    practice: bool = False,
    no_day: bool = False,
    device: str = "",
    address: str = "",
) -> tuple[Game, bool]:
    """Validate a game with the rules engine and store it; returns (game, created).

    The game alone: `ranking.actions.game_submit` puts it on the boards too.

    The server replays the log itself and stores its own score, moves, win and
    action count. A refused log raises `illegal_action` with the engine's index,
    token and reason, and stores nothing; so do bad per-action `times`
    (`invalid_times`). With an `idempotency_key` already used by this player
    for the same deal and log, the first game is returned with `created` False;
    for another deal or log the key is refused.

    A game of today's deal (UTC) by a player whose attempt of today is open is
    their ranked game: it closes the attempt, won or not, carries the duration
    the server measured since the attempt started, the attempt's `assisted`
    mark, and the plausibility signals of `games.review`; the copy check of
    `games.copies` follows within a minute, as a job, `rehearsed` among its
    flags when the game replays a game of the day stored before it by the
    player or from the same `device` or `address`. Every other game,
    and any game submitted as `practice`, is practice (`ranked` False): stored
    and replayable, on no board, and an open attempt stays open. A practice
    game past the player's ceilings of the day is refused with a 429
    (`_practice_room`).

    `device` (the browser's known-device id) and `address` (a digest of the
    client's address) are kept with the game for that comparison.

    A game of `no_day` was played outside the daily contest (a race, whose
    server keeps its `times`): practice, and never a day's game even when its
    deal is a day's, so it leaves no fingerprint for the copy check.
    """
    parsed_deal = deal_parse(deal)
    tokens = log_tokens(log)
    if not tokens:
        raise ServiceError("empty_log", "The log holds no action.")
    digest = _request_digest(parsed_deal.number, tokens)

    # Under the player's lock: the open attempt read after it sees one started a
    # moment ago, and two submissions at once close it once.
    now = timezone.now()
    _active_player_lock(player)
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

    # Days are prepared ahead (`daily_deals_prepare`); a submission never chooses one.
    # The day's solver line is left unread (the copy check reads it).
    daily: DailyDeal | None = None
    if not no_day:
        today_deal = DailyDeal.objects.defer("par_log").filter(date=now.date()).first()
        if today_deal is not None and today_deal.number == parsed_deal.number:
            daily = today_deal
    attempt = (
        _open_attempt(player=player, day=daily) if daily is not None and not practice else None
    )
    if attempt is None and not no_day:
        _practice_room(player=player, now=now, actions=len(tokens))

    played = log_replay(parsed_deal, tokens)
    canonical = played.log
    duration_ms = _elapsed_ms(attempt.started_at, now) if attempt is not None else None
    checked_times = None
    if times is not None:
        allowance: int = settings.ATTEMPT_TIMES_ALLOWANCE_MS
        checked_times = times_check(
            times,
            actions=len(canonical),
            latest_ms=duration_ms + allowance if duration_ms is not None else None,
        )
    if attempt is not None and attempt.times:
        # A streamed attempt is timed by the server, whatever times the client sent.
        assert duration_ms is not None
        checked_times = _server_times(attempt, canonical, duration_ms)

    game = Game(
        player=player,
        deal_number=parsed_deal.number,
        log=" ".join(canonical),
        score=played.score,
        moves=played.moves,
        won=played.is_won,
        actions=len(canonical),
        rules_version=rules.RULES_VERSION,
        daily=daily,
        created_at=now,
        idempotency_key=idempotency_key,
        request_digest=digest,
        device=device,
        address=address,
        times=checked_times if no_day else None,
        # Every daily game leaves its fingerprint for the copy check, which compares a
        # ranked one with the games before it: a job, after the answer (games.copies).
        fingerprint_pending=daily is not None,
    )
    if attempt is not None:
        assert daily is not None and duration_ms is not None
        review = review_game(
            log=canonical,
            won=played.is_won,
            duration_ms=duration_ms,
            saves=steps_of(checked_times) if attempt.times and checked_times else attempt.saves,
            times=checked_times,
            times_by_server=bool(attempt.times),
            min_ms_per_action=settings.REVIEW_MIN_MS_PER_ACTION,
        )
        # Pointing at the attempt is what closes it (one game per attempt).
        game.attempt = attempt
        game.ranked = True
        game.assisted = attempt.assisted
        game.duration_ms = duration_ms
        game.times = checked_times
        game.review = review.signals
        game.review_flags = " ".join(review.flags)
        game.review_state = review_state(review.flags)
    game.save(force_insert=True)
    if attempt is not None:
        transaction.on_commit(partial(live.attempt_closed_announce, attempt.pk, game.pk))
    return game, True


def _practice_room(*, player: User, now: datetime.datetime, actions: int) -> None:
    """Refuse a practice game of `actions` past the player's ceilings of the UTC day
    (`PLAYER_GAMES_PER_DAY`, `PLAYER_ACTIONS_PER_DAY`): a 429 until midnight.

    Read under the player's lock, so that submissions at once cannot all pass.
    """
    midnight = datetime.datetime.combine(now.date(), datetime.time(), tzinfo=datetime.UTC)
    stored = Game.objects.filter(player=player, created_at__gte=midnight).aggregate(
        games=Count("pk"), actions=Sum("actions")
    )
    wait = max(1, int((midnight + datetime.timedelta(days=1) - now).total_seconds()))
    games_limit: int = settings.PLAYER_GAMES_PER_DAY
    if stored["games"] >= games_limit:
        raise ServiceError(
            "too_many_games",
            gettext_noop("You have stored {limit} games today, the most a day: play on tomorrow."),
            status_code=status.HTTP_429_TOO_MANY_REQUESTS,
            words={"limit": games_limit},
            retry_after=wait,
            limit=games_limit,
            wait=wait,
        )
    actions_limit: int = settings.PLAYER_ACTIONS_PER_DAY
    if (stored["actions"] or 0) + actions > actions_limit:
        raise ServiceError(
            "too_many_actions",
            gettext_noop(
                "Your games of today would hold more than {limit} actions, the most a day: "
                "play on tomorrow."
            ),
            status_code=status.HTTP_429_TOO_MANY_REQUESTS,
            words={"limit": actions_limit},
            retry_after=wait,
            limit=actions_limit,
            wait=wait,
        )


def _server_times(attempt: Attempt, log: Sequence[str], duration_ms: int) -> list[int]:
    """The server's time of each action of a submitted `log`: when the stream brought
    it, for the part that the attempt stored; the submission's, for the rest."""
    kept = attempt.action_times()[: _common_length(attempt.log.split(), log)]
    return _times_extended(kept, len(log), duration_ms)


# --- Moderation --------------------------------------------------------------------

# Flags no person's game raises: such a game is held off the boards until a
# moderator clears it (the submission's others only wait in the queue, on the
# boards). The copy check's `copied` and `solver_line` hold a game too, once
# found (`games.copies`).
HOLDING_FLAGS = frozenset({"too_fast"})


def review_state(flags: Sequence[str]) -> str:
    """Where a newly stored ranked game stands with the moderators, from its flags."""
    if HOLDING_FLAGS.intersection(flags):
        return ReviewState.HELD
    return ReviewState.FLAGGED if flags else ReviewState.NONE


def _moderation_log(
    *,
    kind: str,
    moderator: User | None,
    player_id: int,
    reason: str,
    game: Game | None = None,
) -> ModerationAction:
    return ModerationAction.objects.create(
        kind=kind,
        moderator=moderator,
        player_id=player_id,
        game=game,
        reason=reason[:500],
        created_at=timezone.now(),
    )


@transaction.atomic
def game_void_store(
    *, game: Game, reason: str = "", moderator: User | None = None
) -> tuple[Game, bool]:
    """Mark a game voided, logged with who and why; (the game, whether it changed).

    Voiding a voided game changes nothing. `ranking.actions.game_void` takes
    it off the boards too.
    """
    _player_lock(game.player)
    game = Game.objects.select_related("daily", "player").get(pk=game.pk)
    if game.is_voided:
        return game, False
    game.voided_at = timezone.now()
    game.void_reason = reason[:200]
    fields = ["voided_at", "void_reason"]
    if game.review_state in (ReviewState.FLAGGED, ReviewState.HELD):
        game.review_state = ReviewState.VOIDED
        fields.append("review_state")
    game.save(update_fields=fields)
    _moderation_log(
        kind=ModerationAction.Kind.VOID,
        moderator=moderator,
        player_id=game.player_id,
        game=game,
        reason=reason,
    )
    return game, True


@transaction.atomic
def game_review_clear_store(
    *, game: Game, moderator: User | None, reason: str = ""
) -> tuple[Game, bool]:
    """Clear a flagged or held game after review: it leaves the queue; (the game,
    whether it was held: then `ranking.actions.game_review_clear` puts it on the
    boards, which a flagged one never left)."""
    _player_lock(game.player)
    game = Game.objects.select_related("daily", "player").get(pk=game.pk)
    if game.review_state not in (ReviewState.FLAGGED, ReviewState.HELD):
        return game, False
    was_held = game.review_state == ReviewState.HELD
    game.review_state = ReviewState.CLEARED
    game.save(update_fields=["review_state"])
    _moderation_log(
        kind=ModerationAction.Kind.CLEAR,
        moderator=moderator,
        player_id=game.player_id,
        game=game,
        reason=reason,
    )
    return game, was_held


@transaction.atomic
def player_active_store(*, player: User, active: bool, moderator: User | None, reason: str) -> bool:
    """Ban a player (`active` False) or lift their ban, logged with who and why; whether
    it changed. Django refuses an inactive account's password and session; its
    API token is revoked and its open sockets close after the commit.
    `ranking.actions.player_ban` and `player_unban` bring the boards, the leagues
    and the races in step."""
    if not reason.strip():
        raise ServiceError("reason_required", "Say why: a ban and its lifting are logged.")
    if _player_lock(player) == active:
        return False
    # Saved, not updated: the save of a deactivated player ends their access
    # (`easyharp_site.accounts.receivers`).
    player.is_active = active
    player.save(update_fields=["is_active"])
    _moderation_log(
        kind=ModerationAction.Kind.UNBAN if active else ModerationAction.Kind.BAN,
        moderator=moderator,
        player_id=player.pk,
        reason=reason,
    )
    return True
