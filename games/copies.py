"""Copies recognised: a ranked game whose play is another account's game of the same deal.

Games are compared on the tables they pass through, not on their text, so
swapping two independent moves, tapping the stock or taking a move back and
playing it again hides nothing. Each table is a 64-bit hash
(`rules.Game.table_hash`); a game is the set of the tables of its line, less
the deal's start and the won table, which every game or every win shares. Its
line is the log with what was undone removed (`line_of`): a move and the undo
that took it back, nested ones too, leave no table, so detours undone at once
change nothing in what a game is compared on.

Every daily game (ranked or practice) leaves a bottom-k sketch: the
`SKETCH_SIZE` smallest of its tables in an order keyed by the server's secret
(`sketch_key`), one `GameFingerprint` row each; no one outside can choose
moves whose tables sort first. A ranked game looks up the other games of the
deal whose sketch holds any of its own tables (its `LOOKUP_TABLES` first in the
keyed order), at most `PER_HASH_LIMIT` rows per table (so a table common to
many games cannot make the lookup read them all), keeps the `CANDIDATES`
sharing the most, and measures those that share enough exactly, by replaying
their logs; the day's solver line is measured too. A copy's sketch lies
inside its own tables whatever it adds, so padding the copy hides nothing.

Who copied whom is the server's clock, not the order of the submissions: for
each table two games share, the time the server had the action that first
reached it (`Timeline`). The game that reached most of them later is the
follower; when the game being checked turns out to be the source of a game
submitted before it (a copy that followed an attempt still open, and was
submitted first), that earlier game is flagged then (`CopyReview.followers`).
How the measure and the thresholds were chosen is written up in
docs/FAIR_PLAY.md.

A ranked game that replays a game of the day stored before it by its player,
or from its browser or address under another account, is flagged `rehearsed`
(`rehearsal_review`).

The check is a job (`pending_fingerprints_check`, every minute), not part of
the submission: a submission only marks its game `fingerprint_pending`, and
the job takes the marked games in the order they were stored, so each is
compared with the games stored before it. A copy's flags (`copied`,
`solver_line`) hold the game off the boards until a moderator reviews it;
`rehearsed` puts it in the review queue and leaves it on them.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import heapq
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from games import rules
from games.models import Attempt, Game, GameFingerprint, ReviewState

# Hashes kept per game (bottom-k): enough that a copy shares most of them with
# its original, few enough that a submission writes and reads little.
SKETCH_SIZE = 24
# Tables of a game looked up (its first in the keyed order). An original's
# sketch is its first tables in that order, so they are among a copy's first
# ones too, unless the copy is several times as long (four, here): moves it
# adds land anywhere in an order no one outside knows.
LOOKUP_TABLES = 96
# Rows read per table at most, and the games measured at most.
PER_HASH_LIMIT = 40
CANDIDATES = 3
# The job leaves a game this long after it was stored, so that the games stored
# before it have all committed (a submission's transaction takes milliseconds).
SETTLE_SECONDS = 5
# Games checked per transaction (each game's rows stay locked until its end).
BATCH = 50
# A candidate is replayed only when this many hashes of its sketch are tables
# of the game: a whole copy holds 13 or more of its original's 24, one of its
# first 70 % of actions 8 or more, honest games up to 8 (then a replay tells
# them apart).
MIN_SKETCH_SHARED = 6
# The copy flag (`Match.similarity`), and the tables in common it needs: an
# abandoned game of a few tables proves nothing. Honest independent wins reach
# 0.21 and 34 tables at most, whole copies 0.67 and 94 at least (docs/FAIR_PLAY.md).
COPY_SIMILARITY = 0.6
COPY_MIN_TABLES = 40
# A game that followed another by the server's clock (the server had nearly
# every table in common from the other first) and played its opening is a copy
# of that opening, however it ended: at a shared prefix of this many tables,
# counted over openings of which this share or more are the other's tables.
# Honest games share an opening of 33 tables at most, a copy of a game's first
# 70 % of actions finished otherwise 45 or more (docs/FAIR_PLAY.md).
FOLLOWED_THROUGHOUT = 0.9
PREFIX_SHARE = 0.8
PREFIX_MIN_TABLES = 40


def sketch_key(tables: Iterable[int]) -> list[int]:
    """The tables' hashes in the sketch's keyed order: each hash mixed with a key of the
    server's secret (BLAKE2b), a signed 64-bit number as databases store it."""
    keyed = _sketch_hasher()
    out = []
    for table in tables:
        one = keyed.copy()
        one.update(table.to_bytes(8, "little", signed=True))
        out.append(int.from_bytes(one.digest(), "little", signed=True))
    return out


@functools.lru_cache(maxsize=1)
def _sketch_hasher() -> Any:
    # From SECRET_KEY: a new secret makes the day's earlier sketches unreadable, no more.
    key = hashlib.blake2b(
        settings.SECRET_KEY.encode(), digest_size=32, person=b"copy-sketch"
    ).digest()
    return hashlib.blake2b(digest_size=8, key=key)


@dataclass(frozen=True)
class Timeline:
    """When the server had each table of a game: ms since the epoch of the action that
    first reached it (the server's receive time of a streamed action, the save's or
    the submission's for the others: never earlier than the server saw it); and
    the game's tables in the order its line first reached them."""

    reached: Mapping[int, int]
    order: tuple[int, ...] = ()


@dataclass(frozen=True)
class Match:
    """How alike two games' play is: `game` is the other one, None for the solver's line.

    `similarity` is the share of the shorter game's tables that the other
    passes too: a whole copy with moves swapped or inserted is near 1, and so
    is a game that copies the first 80 % of another's and then plays on its
    own, however long its own ending. `later` and `earlier` count the tables
    in common that the game reached after the other, and before it, by the
    server's clock (both 0 when a game's times are unknown); `prefix` is the
    follower's shared prefix (`shared_prefix`) with the game it followed.
    """

    game: int | None
    common: int
    similarity: float
    later: int = 0
    earlier: int = 0
    prefix: int = 0

    @property
    def follows(self) -> bool:
        """Whether the game played the tables in common after the other (or no one
        can tell: then the game submitted later is taken for the follower)."""
        return self.later >= self.earlier

    @property
    def followed_throughout(self) -> bool:
        """Whether the server had nearly every table in common from one game first
        (`FOLLOWED_THROUGHOUT` of them): one followed the other."""
        first = max(self.later, self.earlier)
        return first > 0 and first >= FOLLOWED_THROUGHOUT * self.common


def line_of(log: Sequence[str]) -> list[int]:
    """The indexes of a log's actions that stand: every action an undo took back is
    removed with the undo (nested ones too), as if never played. The log must be
    one the engine accepts: an undo takes back the latest action not taken back.

    >>> line_of("W9 U 37 14 U U 35".split())
    [6]
    """
    kept: list[int] = []
    for index, token in enumerate(log):
        if token.upper() == rules.UNDO_TOKEN:
            kept.pop()
        else:
            kept.append(index)
    return kept


def game_tables(*, deal_number: int, log: str | Sequence[str], won: bool) -> frozenset[int]:
    """The hashes of the tables of a game's line (`line_of`) on deal `deal_number`, less
    the start and a win's last table (`tables_of`). The log must be one the engine accepts."""
    hashes, _ = _line_tables(deal_number, log)
    return tables_of(hashes, won=won)


def game_read(
    *, deal_number: int, log: str | Sequence[str], won: bool, times: Sequence[int]
) -> tuple[frozenset[int], Timeline]:
    """A game's tables (`game_tables`) and when the server had each (`times`: the
    server's time of each action of `log`, ms since the epoch), from one replay."""
    return _timed(*_line_tables(deal_number, log), won=won, times=times)


def _timed(
    hashes: Sequence[int], reached_by: Sequence[int], *, won: bool, times: Sequence[int]
) -> tuple[frozenset[int], Timeline]:
    tables = tables_of(hashes, won=won)
    reached: dict[int, int] = {}
    for table, index in zip(hashes[1:], reached_by, strict=True):
        if table in tables:
            reached.setdefault(table, times[index])
    # Dicts keep the order of insertion: the order the line first reached them.
    return tables, Timeline(reached, tuple(reached))


def _line_tables(deal_number: int, log: str | Sequence[str]) -> tuple[list[int], list[int]]:
    """The `rules.table_hashes` of a log's line, and the index in the log of the action
    that reached each table after the start."""
    tokens = log.split() if isinstance(log, str) else log
    line = line_of(tokens)
    hashes = rules.table_hashes(deal_number, [tokens[i] for i in line])
    # One table per action of the line but stock taps (which change no table).
    return hashes, [i for i in line if tokens[i].upper() != rules.STOCK_TOKEN]


def game_server_times(game: Game) -> list[int]:
    """When the server had each action of a stored game, ms since the epoch: a streamed
    ranked attempt's receive times; for an attempt saved whole (`PATCH`), the first
    save that held the action; else, and for practice, the submission's time.
    Never earlier than the server had the action (nor than anyone could watch it)."""
    submitted = _epoch_ms(game.created_at)
    attempt = game.attempt if game.ranked and game.attempt_id is not None else None
    if attempt is None:
        return [submitted] * game.actions
    start = _epoch_ms(attempt.started_at)
    if attempt.times and game.times:
        # The ranked game of a streamed attempt carries the server's times.
        times = [start + int(time) for time in game.times[: game.actions]]
    else:
        times = []
        for elapsed, count in attempt.saves:
            times += [start + int(elapsed)] * (min(int(count), game.actions) - len(times))
    return times + [submitted] * (game.actions - len(times))


def _epoch_ms(moment: datetime.datetime) -> int:
    return int(moment.timestamp() * 1000)


def tables_of(hashes: Sequence[int], *, won: bool) -> frozenset[int]:
    """A game's tables from its `rules.table_hashes`: less the start, which every game
    of the deal has, and the last table of a won game, which every win has (the
    same for every deal)."""
    tables = set(hashes[1:-1] if won else hashes[1:])
    tables.discard(hashes[0])
    return frozenset(tables)


def sketch(tables: Collection[int]) -> list[int]:
    """The game's bottom-k sketch: the `SKETCH_SIZE` smallest of its keyed tables."""
    return heapq.nsmallest(SKETCH_SIZE, sketch_key(tables))


def match(
    tables: frozenset[int],
    earlier: frozenset[int],
    *,
    game: int | None,
    mine: Timeline | None = None,
    theirs: Timeline | None = None,
) -> Match:
    """How alike a game's play (`tables`) is to that of another game (`earlier`), and,
    with both timelines, which of the two had the tables in common first."""
    shared = tables & earlier
    shorter = min(len(tables), len(earlier))
    later = earlier_count = prefix = 0
    if mine is not None and theirs is not None:
        for table in shared:
            at, other = mine.reached.get(table), theirs.reached.get(table)
            if at is None or other is None or at == other:
                continue
            if at > other:
                later += 1
            else:
                earlier_count += 1
        follower, source = (mine, earlier) if later >= earlier_count else (theirs, tables)
        prefix = shared_prefix(follower.order, source)
    return Match(
        game=game,
        common=len(shared),
        similarity=len(shared) / shorter if shorter else 0.0,
        later=later,
        earlier=earlier_count,
        prefix=prefix,
    )


def shared_prefix(order: Sequence[int], source: Collection[int]) -> int:
    """How many of a game's first tables (in `order`) are another's (`source`): its
    tables in common in the longest opening of which `PREFIX_SHARE` or more are
    the other's. A game that plays another's first moves, then its own, shares
    all of them; a few detours on the way do not cut it short.

    >>> shared_prefix([1, 2, 9, 3, 4, 8, 7, 6], {1, 2, 3, 4, 5})
    4
    """
    best = inside = 0
    for count, table in enumerate(order, start=1):
        if table in source:
            inside += 1
            if inside >= PREFIX_SHARE * count:
                best = inside
    return best


def is_copy(found: Match) -> bool:
    """Whether a match is a copy: on `COPY_MIN_TABLES` tables in common or more, alike
    enough (`COPY_SIMILARITY`), or one game followed the other throughout by the
    server's clock and played its first `PREFIX_MIN_TABLES` tables."""
    if found.common < COPY_MIN_TABLES:
        return False
    if found.similarity >= COPY_SIMILARITY:
        return True
    return found.followed_throughout and found.prefix >= PREFIX_MIN_TABLES


@functools.lru_cache(maxsize=4)
def _solver_line_tables(deal_number: int, line: str) -> frozenset[int]:
    # The same line is measured against every ranked game of its day.
    return game_tables(deal_number=deal_number, log=line, won=True)


def fingerprint_store(*, game: Game, tables: Collection[int]) -> None:
    """Store a daily game's sketch, so later games of its deal can be compared with it."""
    hashes = sketch(tables)
    if not hashes:
        return
    # One plain statement: in every daily submission, and the ORM's building of
    # 24 rows cost more than their insert (docs/PERFORMANCE.md). On PostgreSQL the
    # hashes go as one array: psycopg parses a statement of more than 50
    # parameters afresh each time, and that cost more than the insert.
    table = GameFingerprint._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                f"INSERT INTO {table} (deal_number, hash, game_id, player_id) "
                "SELECT %s, unnest(%s::bigint[]), %s, %s",
                [game.deal_number, hashes, game.pk, game.player_id],
            )
            return
        rows = ", ".join(["(%s, %s, %s, %s)"] * len(hashes))
        values = [v for hash in hashes for v in (game.deal_number, hash, game.pk, game.player_id)]
        cursor.execute(
            f"INSERT INTO {table} (deal_number, hash, game_id, player_id) VALUES {rows}", values
        )


@dataclass(frozen=True)
class CopyReview:
    """What the copy check found: its signals and flags, the game copied if any, and
    the games submitted before this one that copied it (`followers`)."""

    signals: dict[str, Any]
    flags: list[str]
    copy_of: int | None
    similarity: float | None
    followers: list[Match] = field(default_factory=list)


def copy_review(
    *,
    deal_number: int,
    player_id: int,
    tables: frozenset[int],
    solver_line: str,
    before: int | None = None,
    timeline: Timeline | None = None,
) -> CopyReview:
    """Compare a ranked game's play with the other players' games stored before it and
    the solver's line.

    Before: stored before the game `before` (all of the deal's games when None).

    Flags `copied` when the most alike game it followed (`Match.follows`, by
    `timeline` against theirs) is a copy's match, and `solver_line` when the
    day's solver line is. A ranked game stored before it that followed it, a
    copy's match, is one of the `followers`. Reads at most `LOOKUP_TABLES` x
    `PER_HASH_LIMIT` fingerprint rows in one query and replays at most
    `CANDIDATES` games and the solver's line (whose tables are kept in memory).
    """
    line = (
        match(tables, _solver_line_tables(deal_number, solver_line), game=None)
        if solver_line
        else None
    )
    found = _earlier_matches(
        deal_number=deal_number,
        player_id=player_id,
        tables=tables,
        before=before,
        timeline=timeline,
    )
    best = max(
        (each for each, _ in found if each.follows),
        # Of equal matches, the earliest game: the original rather than a copy of it.
        key=lambda each: (is_copy(each), each.similarity, each.common, -(each.game or 0)),
        default=None,
    )
    followers = [each for each, ranked in found if ranked and not each.follows and is_copy(each)]
    flags = []
    if best is not None and is_copy(best):
        flags.append("copied")
    if line is not None and is_copy(line):
        flags.append("solver_line")
    copied = best if "copied" in flags else line if flags else None
    signals = {
        "tables": len(tables),
        "closest_game": best.game if best is not None else None,
        "closest_game_similarity": round(best.similarity, 3) if best is not None else None,
        "closest_game_common_tables": best.common if best is not None else None,
        "solver_line_similarity": round(line.similarity, 3) if line is not None else None,
        "solver_line_common_tables": line.common if line is not None else None,
    }
    if best is not None:
        # Of the tables in common, how many this game had after the other (server's clock).
        signals["closest_game_reached_later"] = best.later
        signals["closest_game_reached_earlier"] = best.earlier
        signals["closest_game_shared_prefix"] = best.prefix
    return CopyReview(
        signals=signals,
        flags=flags,
        copy_of=copied.game if copied is not None else None,
        similarity=copied.similarity if copied is not None else None,
        followers=followers,
    )


def _earlier_matches(
    *,
    deal_number: int,
    player_id: int,
    tables: frozenset[int],
    before: int | None,
    timeline: Timeline | None,
) -> list[tuple[Match, bool]]:
    """The candidates that share enough of their sketch with the game's tables, measured
    exactly by replaying them; each with whether it is a ranked game."""
    candidates = [
        game
        for game, shared in candidates_sharing(
            deal_number=deal_number,
            player_id=player_id,
            hashes=heapq.nsmallest(LOOKUP_TABLES, sketch_key(tables)),
            before=before,
        )
        if shared >= MIN_SKETCH_SHARED
    ]
    if not candidates:
        return []
    games = (
        Game.objects.filter(pk__in=candidates)
        .select_related("attempt")
        .only(
            "log",
            "won",
            "ranked",
            "actions",
            "times",
            "created_at",
            "attempt__started_at",
            "attempt__times",
            "attempt__saves",
        )
    )
    # Copies of one game often share its sketch too: each log is replayed once.
    lines: dict[str, tuple[list[int], list[int]]] = {}
    matches = []
    for game in games:
        if game.log not in lines:
            lines[game.log] = _line_tables(deal_number, game.log)
        theirs, when = _timed(*lines[game.log], won=game.won, times=game_server_times(game))
        matches.append(
            (
                match(tables, theirs, game=game.pk, mine=timeline, theirs=when),
                game.ranked,
            )
        )
    return matches


# Each table looked up reads at most PER_HASH_LIMIT rows of the index on
# (deal_number, hash): a LATERAL join on PostgreSQL.
_CANDIDATES_POSTGRES = """
SELECT f.game_id, count(*) AS shared
FROM unnest(%s::bigint[]) AS s(hash)
CROSS JOIN LATERAL (
    SELECT game_id FROM games_gamefingerprint
    WHERE deal_number = %s AND hash = s.hash AND player_id <> %s AND game_id < %s
    LIMIT %s
) f
GROUP BY f.game_id
ORDER BY shared DESC, f.game_id
LIMIT %s
"""
# SQLite (development, tests) has no LATERAL: each hash's first rows by a window.
_CANDIDATES_SQLITE = """
SELECT game_id, count(*) AS shared FROM (
    SELECT game_id, row_number() OVER (PARTITION BY hash ORDER BY game_id) AS place
    FROM games_gamefingerprint
    WHERE deal_number = %s AND hash IN ({hashes}) AND player_id <> %s AND game_id < %s
)
WHERE place <= %s
GROUP BY game_id
ORDER BY shared DESC, game_id
LIMIT %s
"""


def candidates_sharing(
    *, deal_number: int, player_id: int, hashes: Sequence[int], before: int | None = None
) -> list[tuple[int, int]]:
    """(game, hashes shared) of the other players' games stored before the game `before`
    (any, when None) whose sketches hold the most of `hashes` (keyed tables), best first."""
    if not hashes:
        return []
    # Game ids are positive and below 2**63 (a bigint).
    before = before if before is not None else 2**63 - 1
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                _CANDIDATES_POSTGRES,
                [list(hashes), deal_number, player_id, before, PER_HASH_LIMIT, CANDIDATES],
            )
        else:
            cursor.execute(
                _CANDIDATES_SQLITE.format(hashes=", ".join(["%s"] * len(hashes))),
                [deal_number, *hashes, player_id, before, PER_HASH_LIMIT, CANDIDATES],
            )
        return [(game, shared) for game, shared in cursor.fetchall()]


def pending_fingerprints_check(
    *, held: Callable[[Game], None], now: datetime.datetime | None = None
) -> int:
    """Check and fingerprint every game marked `fingerprint_pending` and stored
    `SETTLE_SECONDS` before `now` or earlier, in the order they were stored; returns
    how many. The job's (`ranking.actions.copies_check`), which passes `held`.

    A ranked game is compared with the games before it (`copy_review`): its
    signals join the review's, and a copy's flags (`copied`, `solver_line`) hold
    it off the boards until a moderator reviews it (again, when a moderator
    cleared it of other flags meanwhile; a voided game stays voided); so do those
    of a game before it that turns out to have followed it. `held(game)` is
    called, in the same transaction, for each ranked game newly held, so that the
    caller takes it off the boards. Then its sketch is stored, for the games
    after it.
    Batches of `BATCH` games, each in a transaction. On PostgreSQL one run
    works at a time (a run that finds another at work stops), so that no game
    is compared before the games stored ahead of it have their sketches.
    """
    until = (now or timezone.now()) - datetime.timedelta(seconds=SETTLE_SECONDS)
    checked = 0
    while True:
        with transaction.atomic():
            if not _alone():
                return checked
            games = list(
                Game.objects.select_for_update(of=("self",))
                .select_related("daily", "attempt")
                .filter(fingerprint_pending=True, created_at__lte=until)
                .order_by("id")[:BATCH]
            )
            for game in games:
                for newly_held in _fingerprint(game):
                    held(newly_held)
        if not games:
            return checked
        checked += len(games)


def unsubmitted_attempts_check(*, held: Callable[[Game], None], before: datetime.date) -> int:
    """Read, as a copy's source, each attempt of a day before `before` (a closed day)
    that was never submitted; returns how many attempts it read. The job's
    (`ranking.actions.unsubmitted_attempts_check`), which passes `held`.

    A ranked game is compared with the games stored before it, so a game that
    followed an open attempt is found once that attempt's game is checked; an
    attempt never submitted has no game. Once its day is closed it never will:
    its saved line, with the server's time of each action, is compared with the
    deal's games, and a ranked game that reached its tables later, a copy's
    match, is flagged `copied` and held (`held(game)`, in the same transaction).
    The submitted attempts of those days are only marked read. Batches of
    `BATCH` attempts, each in a transaction, one run at a time on PostgreSQL.
    """
    read = 0
    while True:
        with transaction.atomic():
            if not _alone():
                return read
            closed = Attempt.objects.filter(copy_checked=False, daily__date__lt=before)
            # Submitted: a game, compared in its turn. Marked read without a look.
            submitted = closed.filter(game__isnull=False).values_list("pk", flat=True)[:MARK_BATCH]
            marked = Attempt.objects.filter(pk__in=list(submitted)).update(copy_checked=True)
            attempts = list(
                closed.filter(game__isnull=True)
                .select_for_update(of=("self",))
                .select_related("daily")
                .order_by("id")[:BATCH]
            )
            for attempt in attempts:
                for newly_held in _attempt_followers_flag(attempt):
                    held(newly_held)
            Attempt.objects.filter(pk__in=[attempt.pk for attempt in attempts]).update(
                copy_checked=True
            )
        if not attempts and not marked:
            return read
        read += marked + len(attempts)


def _attempt_followers_flag(attempt: Attempt) -> list[Game]:
    """Flag `copied` the ranked games that followed `attempt`'s line (never submitted);
    the games it newly held off the boards."""
    log = attempt.log.split()
    if not log:
        return []
    start = _epoch_ms(attempt.started_at)
    tables, timeline = game_read(
        deal_number=attempt.daily.number,
        log=log,
        won=False,
        times=[start + time for time in attempt.action_times()],
    )
    copied = copy_review(
        deal_number=attempt.daily.number,
        player_id=attempt.player_id,
        tables=tables,
        solver_line="",
        timeline=timeline,
    )
    newly_held: list[Game] = []
    for found in copied.followers:
        newly_held += _follower_flag(source=attempt, found=found)
    return newly_held


# Submitted attempts of closed days marked read in one statement at most.
MARK_BATCH = 10_000


# The advisory lock of the copy check's runs (any number no other lock of the project's uses).
_RUN_LOCK = 0x636F7079  # "copy"


def _alone() -> bool:
    """Whether this transaction holds the copy check's lock (always, but on PostgreSQL)."""
    if connection.vendor != "postgresql":
        return True
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [_RUN_LOCK])
        return bool(cursor.fetchone()[0])


def _fingerprint(game: Game) -> list[Game]:
    """Check and fingerprint `game`; the ranked games it newly held off the boards."""
    tables, timeline = game_read(
        deal_number=game.deal_number,
        log=game.log,
        won=game.won,
        times=game_server_times(game),
    )
    fields = ["fingerprint_pending"]
    newly_held: list[Game] = []
    if game.ranked and game.daily is not None:
        copied = copy_review(
            deal_number=game.deal_number,
            player_id=game.player_id,
            tables=tables,
            solver_line=game.daily.par_log,
            before=game.pk,
            timeline=timeline,
        )
        rehearsal = rehearsal_review(game, tables)
        game.review = {**game.review, **copied.signals, **rehearsal}
        found = [*(["rehearsed"] if rehearsal else []), *copied.flags]
        game.review_flags = " ".join([*game.flags, *found])
        fields += ["review", "review_flags", "review_state"]
        if rehearsal:
            _flagged(game)
        if copied.flags:
            game.copy_of_id = copied.copy_of
            game.copy_similarity = copied.similarity
            if _held(game):
                newly_held.append(game)
            fields += ["copy_of", "copy_similarity"]
        for follower in copied.followers:
            newly_held += _follower_flag(source=game, found=follower)
    fingerprint_store(game=game, tables=tables)
    game.fingerprint_pending = False
    game.save(update_fields=fields)
    return newly_held


# The day's earlier games a ranked game is compared with at most (the latest first):
# its player's own, and those from the same browser or address under any account.
REHEARSAL_CANDIDATES = 20


def rehearsal_review(game: Game, tables: frozenset[int]) -> dict[str, Any]:
    """The signals of the game of the day that the ranked `game` replays, empty when
    none: a game of the same deal stored before it by its player, or from its browser
    or address under another account (one person's second account), alike as a copy
    is (`is_copy`). `tables` are the game's.

    Of the latest `REHEARSAL_CANDIDATES` such games, those with a sketch are replayed
    only when `MIN_SKETCH_SHARED` of its hashes are tables of the game (as the copy
    check's candidates are); one still without its sketch is replayed.
    """
    same_source = Q(player_id=game.player_id)
    if game.device:
        same_source |= Q(device=game.device)
    if game.address:
        same_source |= Q(address=game.address)
    earlier = list(
        Game.objects.filter(
            same_source, daily_id=game.daily_id, deal_number=game.deal_number, pk__lt=game.pk
        )
        .order_by("-id")
        .values_list("pk", "player_id", "device", "log", "won")[:REHEARSAL_CANDIDATES]
    )
    sketches: dict[int, list[int]] = {}
    for pk, hash in GameFingerprint.objects.filter(
        game_id__in=[row[0] for row in earlier]
    ).values_list("game_id", "hash"):
        sketches.setdefault(pk, []).append(hash)
    keyed = frozenset(sketch_key(tables)) if sketches else frozenset()
    best: tuple[Match, str] | None = None
    for pk, player_id, device, log, earlier_won in earlier:
        if pk in sketches and len(keyed.intersection(sketches[pk])) < MIN_SKETCH_SHARED:
            continue
        found = match(
            tables, game_tables(deal_number=game.deal_number, log=log, won=earlier_won), game=pk
        )
        if is_copy(found) and (best is None or found.similarity > best[0].similarity):
            source = (
                "own"
                if player_id == game.player_id
                else "device"
                if game.device and device == game.device
                else "address"
            )
            best = (found, source)
    if best is None:
        return {}
    found, source = best
    return {
        "rehearsed_game": found.game,
        "rehearsed_source": source,
        "rehearsed_similarity": round(found.similarity, 3),
        "rehearsed_common_tables": found.common,
    }


def _flagged(game: Game) -> None:
    """In the review queue, on the boards: a game that was not (or that a moderator
    cleared of other flags) is flagged; a held or voided one stays so."""
    if game.review_state in (ReviewState.NONE, ReviewState.CLEARED):
        game.review_state = ReviewState.FLAGGED


def _held(game: Game) -> bool:
    """Off the boards until reviewed (again when a moderator cleared it of other flags;
    voided stays voided); whether it was on them."""
    if game.review_state not in (ReviewState.NONE, ReviewState.FLAGGED, ReviewState.CLEARED):
        return False
    game.review_state = ReviewState.HELD
    return True


def _follower_flag(*, source: Game | Attempt, found: Match) -> list[Game]:
    """Flag `copied` a ranked game stored before `source` that played its tables after
    it: the copy was submitted first, while the game it followed was still open
    (or it followed an attempt never submitted). A game flagged `copied` already
    keeps the game it was found to copy."""
    assert found.game is not None
    follower = Game.objects.select_for_update(of=("self",)).get(pk=found.game)
    kind = "followed_game" if isinstance(source, Game) else "followed_attempt"
    follower.review = {
        **follower.review,
        kind: source.pk,
        "followed_game_similarity": round(found.similarity, 3),
        "followed_game_common_tables": found.common,
        # Of the tables in common, how many the follower had after the source.
        "followed_game_reached_later": found.earlier,
        "followed_game_shared_prefix": found.prefix,
    }
    fields = ["review"]
    newly_held = []
    if "copied" not in follower.flags:
        follower.review_flags = " ".join([*follower.flags, "copied"])
        follower.copy_of = source if isinstance(source, Game) else None
        follower.copy_similarity = found.similarity
        if _held(follower):
            newly_held.append(follower)
        fields += ["review_flags", "copy_of", "copy_similarity", "review_state"]
    follower.save(update_fields=fields)
    return newly_held
