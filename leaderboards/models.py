"""Leaderboard storage: each player's ranked entry per day and board, and the player counts.

The boards are read far more often than written, and must stay fast with a
million games in a day, so they are kept ready rather than computed from games:

- `BoardEntry` holds one row per (date, board, player): that player's ranked
  game of the day, when it counts (not assisted, not voided, the player not
  banned). Its sort key (`key1`, `key2`, `duration_ms`, `submitted_at`,
  `game_id`) is ascending for both boards, so one composite index serves the
  page, the neighbours of a player and the rank count (a row comparison on the
  index).
- `BoardTotal` holds the number of players on each board per day and
  `BoardBucket` per sort key; a game adds its change of them as rows of its
  own (`BoardCountChange`), which a job folds into them in batches, so no
  submission waits on a row that every player of the day writes. A count
  read adds the changes not folded yet.
- `DayResult` is a closed day, frozen: its player counts and distributions;
  `FinalRank` keeps each entry's rank as it stood when its day closed.
- `PlayerStats` is each player's record (played, won, streaks, the histogram
  of moves over par), kept with their ranked games so a page reads one row.

Entries, changes and records are written in the same transaction as the
game that changes them.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Board(models.TextChoices):
    SCORE = "score", "By score"
    MOVES = "moves", "By moves"


# Taken from a won game's `key1` on the score board, so that every win sorts
# before every loss whatever their scores. No score comes near it (1,515 at
# most, docs/RULES.md 6.2), so a bucket still holds one score and one result.
WON_AHEAD = 1_000_000


def board_sort_key(*, board: str, score: int, moves: int, won: bool) -> tuple[int, int]:
    """(key1, key2) of an entry: ascending on both boards, best first.

    >>> board_sort_key(board="score", score=1300, moves=190, won=False)
    (-1300, 190)
    >>> board_sort_key(board="score", score=1280, moves=170, won=True)
    (-1001280, 170)
    """
    if board == Board.SCORE:
        return -score - (WON_AHEAD if won else 0), moves
    return moves, -score


def score_bucket(key1: int) -> tuple[bool, int]:
    """(won, score) of a score board's `key1`: `board_sort_key` read back.

    >>> score_bucket(-1001280), score_bucket(-1300)
    ((True, 1280), (False, 1300))
    """
    return key1 <= -WON_AHEAD, -key1 % WON_AHEAD


# The duration of an entry whose game has none (ranked before games were
# timed): it sorts after every measured one of the same score and moves.
DURATION_UNKNOWN = 2_147_483_647


class EntryColumns(models.Model):
    """The columns of an entry on a day's board, besides its player and game.

    Sort key, ascending on both boards:
    - score board: `key1 = -score`, less `WON_AHEAD` for a won game, `key2 = moves`
      (a win before a loss, then high score, then fewer moves);
    - moves board: `key1 = moves`, `key2 = -score` (fewer moves, then high score);
    then the shorter duration, then the earlier submission, then the lower
    game id (which never ties).
    """

    date = models.DateField()
    board = models.CharField(max_length=5, choices=Board.choices)
    key1 = models.IntegerField()
    key2 = models.IntegerField()
    duration_ms = models.IntegerField(
        default=DURATION_UNKNOWN,
        help_text="Milliseconds the game took (DURATION_UNKNOWN when it was not measured).",
    )
    submitted_at = models.DateTimeField()
    score = models.PositiveIntegerField()
    moves = models.PositiveIntegerField()
    won = models.BooleanField()

    class Meta:
        abstract = True


class BoardEntry(EntryColumns):
    """One player's ranked game of one day on one board (its sort key: `EntryColumns`)."""

    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="board_entries"
    )
    game = models.ForeignKey("games.Game", on_delete=models.PROTECT, related_name="board_entries")

    class Meta(EntryColumns.Meta):
        abstract = False
        constraints = [
            models.UniqueConstraint(
                fields=["date", "board", "player"], name="boardentry_one_per_player"
            ),
        ]
        indexes = [
            models.Index(
                fields=["date", "board", "key1", "key2", "duration_ms", "submitted_at", "game"],
                name="boardentry_rank",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.date} {self.board}: player {self.player_id} game {self.game_id}"


class BoardTotal(models.Model):
    """How many players one day's board has (kept so pages never count a million rows)."""

    date = models.DateField()
    board = models.CharField(max_length=5, choices=Board.choices)
    players = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["date", "board"], name="boardtotal_one_per_board"),
        ]

    def __str__(self) -> str:
        return f"{self.date} {self.board}: {self.players} players"


class BoardBucket(models.Model):
    """How many entries of one day's board share one `key1` (a result and a score, or a
    move count: `board_sort_key`).

    A rank adds the buckets before the player's to a count inside the player's
    own bucket, so it never counts more than one bucket of entries, wherever
    the player stands on the board.
    """

    date = models.DateField()
    board = models.CharField(max_length=5, choices=Board.choices)
    key1 = models.IntegerField()
    players = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["date", "board", "key1"], name="boardbucket_one_per_key"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.date} {self.board} key {self.key1}: {self.players} players"


class BoardCountChange(models.Model):
    """A change of one bucket's player count (and so of its board's total) not folded
    into `BoardBucket` and `BoardTotal` yet.

    A game that enters, moves on or leaves a board inserts its changes here, in
    its own transaction: a new row, which no other submission waits for. The
    job `board_counts_fold` adds them to the counters in batches and deletes
    them; every count read adds the changes still here.
    """

    date = models.DateField()
    board = models.CharField(max_length=5, choices=Board.choices)
    key1 = models.IntegerField()
    players = models.IntegerField(help_text="Players added to the bucket (negative: taken away).")

    class Meta:
        indexes = [
            models.Index(fields=["date", "board", "key1"], name="boardcountchange_bucket"),
        ]

    def __str__(self) -> str:
        return f"{self.date} {self.board} key {self.key1}: {self.players:+d} players"


class FinalRank(models.Model):
    """An entry's rank when its day closed (`close_days`), so history shows that rank.

    A table of its own, written once per entry by a plain insert: closing a
    day of a million entries then adds narrow rows with one index, instead of
    rewriting every wide entry row and its five indexes.
    """

    # No foreign key in the database: checking one would lock a million entry
    # rows while a day closes. Django still deletes the rank with its entry.
    entry = models.OneToOneField(
        BoardEntry,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="final",
        db_constraint=False,
    )
    rank = models.PositiveIntegerField()

    def __str__(self) -> str:
        return f"entry {self.entry_id}: rank {self.rank}"


class DayResult(models.Model):
    """A closed day's results, frozen by `close_days`: what `results` shows once the day is over."""

    date = models.DateField(unique=True)
    players = models.PositiveIntegerField(help_text="Players on the score board.")
    won = models.PositiveIntegerField(help_text="Players who won (the moves board).")
    score_distribution = models.JSONField(
        default=list, help_text="[[score, players], ...] by ascending score."
    )
    moves_distribution = models.JSONField(
        default=list, help_text="[[moves, players], ...] of won games by ascending moves."
    )
    closed_at = models.DateTimeField()

    class Meta:
        ordering = ["-date"]

    def __str__(self) -> str:
        return f"{self.date}: {self.players} players, {self.won} won"


class PlayerStats(models.Model):
    """A player's record over the games on the boards (their ranked, unassisted, not voided
    games), kept with those games by `leaderboards.changes`.

    The streak is stored as the run of won days that ends on the player's last
    counted day (`run_end`); whether it still stands is decided when read,
    against today (`leaderboards.selectors.player_stats`).
    """

    player = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="stats"
    )
    played = models.PositiveIntegerField(default=0)
    won = models.PositiveIntegerField(default=0)
    last_date = models.DateField(null=True, blank=True, help_text="The last day counted.")
    run_length = models.PositiveIntegerField(
        default=0, help_text="Won days in a row ending on `last_date` (0: that day was lost)."
    )
    max_streak = models.PositiveIntegerField(default=0)
    best_score = models.PositiveIntegerField(null=True, blank=True)
    best_moves = models.PositiveIntegerField(
        null=True, blank=True, help_text="Fewest moves of a won game."
    )
    moves_vs_par = models.JSONField(
        default=list, help_text="Won games per bucket of moves over par (MOVES_OVER_PAR_BUCKETS)."
    )

    class Meta:
        verbose_name_plural = "player stats"

    def __str__(self) -> str:
        return f"stats of {self.player_id}: {self.won}/{self.played}"


class BoardCheck(models.Model):
    """The last run of `check_boards` on one day: the differences it found between the
    day's derived stores and what its games give, by kind, and whether it mended them."""

    date = models.DateField(unique=True)
    checked_at = models.DateTimeField()
    seconds = models.FloatField(help_text="How long the check took.")
    repaired = models.BooleanField(help_text="Whether the differences found were mended.")
    drift = models.JSONField(
        default=dict, help_text="{kind: differences found}; empty when the day was in step."
    )
    examples = models.JSONField(default=list, help_text="The first differences found, as text.")

    class Meta:
        ordering = ["-date"]

    def __str__(self) -> str:
        found = sum(self.drift.values())
        return f"{self.date}: {found} difference(s){' mended' if found and self.repaired else ''}"
