"""A player's record, folded from their counted days: pure Python, no database.

Shared by the services that keep `PlayerStats` and by the migration that
filled it for the games stored before it existed, so the rules live once:

- a day counts when the player's ranked game of that day is on the boards
  (not assisted, not voided, the player not banned);
- the streak is the run of won days in a row; a lost day, or a day without a
  counted game, ends it;
- the histogram counts won games by moves over the day's par, in the buckets
  of `MOVES_OVER_PAR_BUCKETS` (a day without a par counts in none).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass, field

# Upper bounds of the buckets of moves over par; the last bucket has none.
MOVES_OVER_PAR_BUCKETS: tuple[int | None, ...] = (0, 10, 25, 50, 100, None)


def moves_over_par_bucket(moves: int, par: int) -> int:
    """The index in `MOVES_OVER_PAR_BUCKETS` of a won game of `moves` on a day of `par`."""
    over = moves - par
    for index, upper in enumerate(MOVES_OVER_PAR_BUCKETS):
        if upper is None or over <= upper:
            return index
    raise AssertionError("unreachable: the last bucket has no upper bound")


def moves_over_par_ranges() -> list[tuple[int | None, int | None]]:
    """(lowest, highest) moves over par of each bucket; None where it is open."""
    ranges: list[tuple[int | None, int | None]] = []
    lower: int | None = None
    for upper in MOVES_OVER_PAR_BUCKETS:
        ranges.append((lower, upper))
        lower = None if upper is None else upper + 1
    return ranges


# The fields of a `Record`, as `PlayerStats` stores them.
RECORD_FIELDS = (
    "played",
    "won",
    "last_date",
    "run_length",
    "max_streak",
    "best_score",
    "best_moves",
    "moves_vs_par",
)


@dataclass
class Record:
    """What `PlayerStats` stores, field for field."""

    played: int = 0
    won: int = 0
    last_date: datetime.date | None = None
    run_length: int = 0
    max_streak: int = 0
    best_score: int | None = None
    best_moves: int | None = None
    moves_vs_par: list[int] = field(default_factory=lambda: [0] * len(MOVES_OVER_PAR_BUCKETS))

    def add(
        self, *, date: datetime.date, won: bool, score: int, moves: int, par: int | None
    ) -> None:
        """Count one more day, later than every day counted so far."""
        if self.last_date is not None and date <= self.last_date:
            raise ValueError(f"{date} is not after the last day counted, {self.last_date}")
        follows = self.last_date is not None and date - self.last_date == datetime.timedelta(1)
        self.played += 1
        self.best_score = score if self.best_score is None else max(self.best_score, score)
        if won:
            self.won += 1
            self.run_length = self.run_length + 1 if follows else 1
            self.max_streak = max(self.max_streak, self.run_length)
            self.best_moves = moves if self.best_moves is None else min(self.best_moves, moves)
            if par is not None:
                self.moves_vs_par[moves_over_par_bucket(moves, par)] += 1
        else:
            self.run_length = 0
        self.last_date = date

    def current_streak(self, today: datetime.date) -> int:
        """The streak that still stands on `today`: a run that ended yesterday still
        stands until today's deal closes; an older one is broken."""
        if self.last_date is None or today - self.last_date > datetime.timedelta(1):
            return 0
        return self.run_length


def record_fold(days: Iterable[tuple[datetime.date, bool, int, int, int | None]]) -> Record:
    """The record of `(date, won, score, moves, par)` days, in ascending date order."""
    record = Record()
    for date, won, score, moves, par in days:
        record.add(date=date, won=won, score=score, moves=moves, par=par)
    return record
