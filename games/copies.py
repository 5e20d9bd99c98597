"""Copies recognised: a ranked game whose play is another account's game of the same deal.

Games are compared on the tables they pass through, not on their text, so
swapping two independent moves, tapping the stock or taking a move back and
playing it again hides nothing. Each table is a 64-bit hash
(`rules.Game.table_hash`); a game is the set of its tables, less the deal's
start and the won table, which every game or every win shares.

Every daily game (ranked or practice) leaves a bottom-k sketch: the
`SKETCH_SIZE` smallest of its hashes, one `GameFingerprint` row each. A ranked
game looks up the earlier games of the deal that share hashes of its own
sketch, at most `PER_HASH_LIMIT` rows per hash (so a table common to many
games cannot make the lookup read them all), keeps the `CANDIDATES` sharing
the most, and measures those that share enough exactly, by replaying their
logs; the day's solver line is measured too. How the measure and the
threshold were chosen is written up in docs/FAIR_PLAY.md.

The check is a job (`pending_fingerprints_check`, every minute), not part of
the submission: a submission only marks its game `fingerprint_pending`, and
the job takes the marked games in the order they were stored, so each is
compared with the games stored before it. A copy's flag puts it in the review
queue; no flag of the check holds a game off the boards, so the boards do not
wait for it.
"""

from __future__ import annotations

import datetime
import functools
import heapq
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from games import rules
from games.models import Game, GameFingerprint, ReviewState

# Hashes kept per game (bottom-k): enough that a copy shares most of them with
# its original, few enough that a submission writes and reads little.
SKETCH_SIZE = 24
# Rows read per hash of the sketch at most, and the games measured at most.
PER_HASH_LIMIT = 40
CANDIDATES = 3
# The job leaves a game this long after it was stored, so that the games stored
# before it have all committed (a submission's transaction takes milliseconds).
SETTLE_SECONDS = 5
# Games checked per transaction (each game's rows stay locked until its end).
BATCH = 50
# A candidate is replayed only when it shares this many hashes of the sketch:
# honest games share a few early tables at most.
MIN_SKETCH_SHARED = 6
# The copy flag (`Match.similarity`), and the tables in common it needs: an
# abandoned game of a few tables proves nothing. Honest independent wins reach
# 0.39 and 21 tables at most, copies 0.8 and 69 at least (docs/FAIR_PLAY.md).
COPY_SIMILARITY = 0.6
COPY_MIN_TABLES = 40


@dataclass(frozen=True)
class Match:
    """How alike two games' play is: `game` is the earlier one, None for the solver's line.

    `similarity` is the share of the shorter game's tables that the other
    passes too: a whole copy with moves swapped or inserted is near 1, and so
    is a game that copies the first 80 % of another's and then plays on its
    own, however long its own ending.
    """

    game: int | None
    common: int
    similarity: float


def game_tables(*, deal_number: int, log: str | Sequence[str], won: bool) -> frozenset[int]:
    """The hashes of the tables a game of deal `deal_number` passes through (`tables_of`
    its `rules.table_hashes`). The log must be one the engine accepts."""
    return tables_of(rules.table_hashes(deal_number, log), won=won)


def tables_of(hashes: Sequence[int], *, won: bool) -> frozenset[int]:
    """A game's tables from its `rules.table_hashes` (a submission has them from its
    replay): less the start, which every game of the deal has, and the last
    table of a won game, which every win has (the same for every deal)."""
    tables = set(hashes[1:-1] if won else hashes[1:])
    tables.discard(hashes[0])
    return frozenset(tables)


def sketch(tables: Collection[int]) -> list[int]:
    """The game's bottom-k sketch: its `SKETCH_SIZE` smallest table hashes."""
    return heapq.nsmallest(SKETCH_SIZE, tables)


def match(tables: frozenset[int], earlier: frozenset[int], *, game: int | None) -> Match:
    """How alike a game's play (`tables`) is to that of an `earlier` game."""
    common = len(tables & earlier)
    shorter = min(len(tables), len(earlier))
    return Match(game=game, common=common, similarity=common / shorter if shorter else 0.0)


def is_copy(found: Match) -> bool:
    """Whether a match is a copy: alike enough, on enough tables."""
    return found.similarity >= COPY_SIMILARITY and found.common >= COPY_MIN_TABLES


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
    """What the copy check found: its signals and flags, and the game copied if any."""

    signals: dict[str, Any]
    flags: list[str]
    copy_of: int | None
    similarity: float | None


def copy_review(
    *,
    deal_number: int,
    player_id: int,
    tables: frozenset[int],
    solver_line: str,
    before: int | None = None,
) -> CopyReview:
    """Compare a ranked game's play with the earlier games of other players and the solver's line.

    Earlier: stored before the game `before` (all of the deal's games when None).

    Flags `copied` when the most alike earlier game is a copy's match, and
    `solver_line` when the day's solver line is. Reads at most `SKETCH_SIZE`
    x `PER_HASH_LIMIT` fingerprint rows in one query and replays at most
    `CANDIDATES` games and the solver's line (whose tables are kept in memory).
    """
    line = (
        match(tables, _solver_line_tables(deal_number, solver_line), game=None)
        if solver_line
        else None
    )
    best = max(
        _earlier_matches(
            deal_number=deal_number, player_id=player_id, tables=tables, before=before
        ),
        # Of equal matches, the earliest game: the original rather than a copy of it.
        key=lambda found: (found.similarity, found.common, -(found.game or 0)),
        default=None,
    )
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
    return CopyReview(
        signals=signals,
        flags=flags,
        copy_of=copied.game if copied is not None else None,
        similarity=copied.similarity if copied is not None else None,
    )


def _earlier_matches(
    *, deal_number: int, player_id: int, tables: frozenset[int], before: int | None
) -> list[Match]:
    """The candidates that share enough of the sketch, measured exactly by replaying them."""
    candidates = [
        game
        for game, shared in candidates_sharing(
            deal_number=deal_number, player_id=player_id, hashes=sketch(tables), before=before
        )
        if shared >= MIN_SKETCH_SHARED
    ]
    if not candidates:
        return []
    games = Game.objects.filter(pk__in=candidates).values_list("pk", "log", "won")
    # Copies of one game often share its sketch too: each log is replayed once.
    measured: dict[str, frozenset[int]] = {}
    matches = []
    for game, log, won in games:
        if log not in measured:
            measured[log] = game_tables(deal_number=deal_number, log=log, won=won)
        matches.append(match(tables, measured[log], game=game))
    return matches


# Each hash of the sketch reads at most PER_HASH_LIMIT rows of the index on
# (deal_number, hash): a LATERAL join on PostgreSQL; elsewhere (SQLite) one
# limited subquery per hash, joined by UNION ALL.
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
_CANDIDATES_ONE_HASH = """
SELECT game_id FROM (
    SELECT game_id FROM games_gamefingerprint
    WHERE deal_number = %s AND hash = %s AND player_id <> %s AND game_id < %s
    LIMIT %s
)"""


def candidates_sharing(
    *, deal_number: int, player_id: int, hashes: Sequence[int], before: int | None = None
) -> list[tuple[int, int]]:
    """(game, hashes shared) of the other players' games stored before the game `before`
    (any, when None) sharing the most `hashes`, best first."""
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
            union = " UNION ALL ".join([_CANDIDATES_ONE_HASH] * len(hashes))
            parameters = [
                value
                for table in hashes
                for value in (deal_number, table, player_id, before, PER_HASH_LIMIT)
            ]
            cursor.execute(
                f"SELECT game_id, count(*) AS shared FROM ({union}) "
                "GROUP BY game_id ORDER BY shared DESC, game_id LIMIT %s",
                [*parameters, CANDIDATES],
            )
        return [(game, shared) for game, shared in cursor.fetchall()]


def pending_fingerprints_check(*, now: datetime.datetime | None = None) -> int:
    """The job: check and fingerprint every game marked `fingerprint_pending` and stored
    `SETTLE_SECONDS` before `now` or earlier, in the order they were stored; returns
    how many.

    A ranked game is compared with the games before it (`copy_review`): its
    signals join the review's, and a copy's flags put it in the review queue
    (back in it, when a moderator cleared it of other flags meanwhile; a voided
    game stays voided). Then its sketch is stored, for the games after it.
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
                .select_related("daily")
                .filter(fingerprint_pending=True, created_at__lte=until)
                .order_by("id")[:BATCH]
            )
            for game in games:
                _fingerprint(game)
        if not games:
            return checked
        checked += len(games)


# The advisory lock of the copy check's runs (any number no other lock of the project's uses).
_RUN_LOCK = 0x636F7079  # "copy"


def _alone() -> bool:
    """Whether this transaction holds the copy check's lock (always, but on PostgreSQL)."""
    if connection.vendor != "postgresql":
        return True
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [_RUN_LOCK])
        return bool(cursor.fetchone()[0])


def _fingerprint(game: Game) -> None:
    tables = game_tables(deal_number=game.deal_number, log=game.log, won=game.won)
    fields = ["fingerprint_pending"]
    if game.ranked and game.daily is not None:
        copied = copy_review(
            deal_number=game.deal_number,
            player_id=game.player_id,
            tables=tables,
            solver_line=game.daily.par_log,
            before=game.pk,
        )
        game.review = {**game.review, **copied.signals}
        fields.append("review")
        if copied.flags:
            game.review_flags = " ".join([*game.flags, *copied.flags])
            game.copy_of_id = copied.copy_of
            game.copy_similarity = copied.similarity
            if game.review_state in (ReviewState.NONE, ReviewState.CLEARED):
                game.review_state = ReviewState.FLAGGED
            fields += ["review_flags", "copy_of", "copy_similarity", "review_state"]
    fingerprint_store(game=game, tables=tables)
    game.fingerprint_pending = False
    game.save(update_fields=fields)
