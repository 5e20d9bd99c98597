"""Plausibility signals of a ranked game, computed once at submission for the moderators.

Pure functions of what the server saw: its own clock (the attempt's start,
each save, the submission, the receive time of each streamed action) and the
per-action times the client sent. Whether
the play copies another game or the solver's line is measured by
`games.copies`; its flags are worded here with the others. Nothing here runs
the solver or changes a board: a flag only puts the game in the review queue.
How each threshold was set is written up in docs/FAIR_PLAY.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from games.rules import STOCK_TOKEN, UNDO_TOKEN

# A person needs at least this long per action, sustained over a whole game:
# see a card, decide, move the pointer or finger, press. Faster on average
# than this is a script.
MIN_MS_PER_ACTION = 150
# ...over at least this many actions: a few quick taps (two turns of the stock)
# are within anyone's reach, and the network's delay alone weighs on a short game.
PACE_MIN_ACTIONS = 20
# "The whole winning log at once": one save (or the submission) brings at least
# this share of a won game's actions, and at least this many, while the play
# page saves every few seconds of play.
BURST_SHARE = 0.5
BURST_MIN_ACTIONS = 50
# Per-action times as even as a metronome: the spread of the gaps between
# actions (their coefficient of variation) below this, over at least
# REGULAR_MIN_INTERVALS gaps. People pause to think; a paced script does not.
REGULAR_MAX_VARIATION = 0.2
REGULAR_MIN_INTERVALS = 30

# The pace of the game's moves as the server received them, each action timed
# by the server's clock alone, never by how the server grouped its writes.
# Taps of the stock and undos are left out: a person repeats them without a
# decision each (quick taps, a held key), while every other action is a card
# chosen and moved, at least one reaction time (some 200 ms) each.
TAPS = frozenset({STOCK_TOKEN, UNDO_TOKEN})
# A burst: this many moves received within this long (from the arrival before
# the first of them): ten decisions within a second, each under half a reaction.
BURST_WINDOW_MOVES = 10
BURST_WINDOW_MS = 1_000
# `bursts` when at least this many moves arrived in bursts, and they are a
# sizeable share of the game's moves or the largest burst came after a silence.
BURST_MIN_MOVES = 40
BURST_MIN_SHARE = 0.2
BURST_SILENCE_MS = 20_000
# `machine_pace`: a run of this many moves received faster than this on
# average, a minute's play of a quick player done in seconds.
RUN_MOVES = 50
RUN_MAX_MS_PER_MOVE = 120


@dataclass(frozen=True)
class Review:
    """The signals of one game (JSON-ready) and the reason codes it is flagged for."""

    signals: dict[str, Any]
    flags: list[str]


def review_game(
    *,
    log: Sequence[str],
    won: bool,
    duration_ms: int,
    saves: Sequence[Sequence[int]],
    times: Sequence[int] | None,
    min_ms_per_action: int = MIN_MS_PER_ACTION,
    times_by_server: bool = False,
) -> Review:
    """The signals of a ranked game and what they flag.

    `saves` are the attempt's saves as `[ms since the start, actions]`, in
    order; the submission itself counts as the last one. `times` are the
    server's receive times when the actions were streamed (`times_by_server`),
    else the client's. `min_ms_per_action` is
    the floor under which a game is `too_fast` (setting REVIEW_MIN_MS_PER_ACTION).
    """
    actions = len(log)
    flags: list[str] = []
    ms_per_action = duration_ms / actions if actions else None
    if (
        ms_per_action is not None
        and actions >= PACE_MIN_ACTIONS
        and ms_per_action < min_ms_per_action
    ):
        flags.append("too_fast")

    points = [*saves, [duration_ms, actions]]
    step_actions, step_silence = _largest_step(points)
    pace = moves_pace(log, points)
    whole_log = won and step_actions >= BURST_MIN_ACTIONS and step_actions >= BURST_SHARE * actions
    if whole_log:
        flags.append("burst")
    if pace.bursting:
        flags.append("bursts")
    if pace.machine:
        flags.append("machine_pace")

    variation = _variation(times) if times else None
    intervals = max(len(times) - 1, 0) if times else 0
    if (
        variation is not None
        and intervals >= REGULAR_MIN_INTERVALS
        and variation < REGULAR_MAX_VARIATION
    ):
        flags.append("regular_times")

    signals = {
        "actions": actions,
        "duration_ms": duration_ms,
        "ms_per_action": round(ms_per_action) if ms_per_action is not None else None,
        "min_ms_per_action": min_ms_per_action,
        "saves": len(saves),
        "largest_step_actions": step_actions,
        "largest_step_share": round(step_actions / actions, 3) if actions else None,
        "silence_before_largest_step_ms": step_silence,
        "times_sent": times is not None,
        "times_by_server": times_by_server,
        "time_variation": round(variation, 3) if variation is not None else None,
        **pace.signals(),
    }
    return Review(signals, flags)


@dataclass(frozen=True)
class MovesPace:
    """How fast the moves (actions but taps, `TAPS`) arrived: the moves in bursts, the
    largest burst and the silence before it, the fastest run's ms per move."""

    moves: int
    burst_moves: int
    largest_burst_moves: int
    silence_before_largest_burst_ms: int
    fastest_run_ms_per_move: float | None

    @property
    def bursting(self) -> bool:
        """Enough moves in bursts: a sizeable share of the game's, or after a silence."""
        return self.burst_moves >= BURST_MIN_MOVES and (
            self.burst_moves >= BURST_MIN_SHARE * self.moves
            or self.silence_before_largest_burst_ms >= BURST_SILENCE_MS
        )

    @property
    def machine(self) -> bool:
        """A run of `RUN_MOVES` moves at a machine's pace."""
        run = self.fastest_run_ms_per_move
        return run is not None and run < RUN_MAX_MS_PER_MOVE

    def signals(self) -> dict[str, Any]:
        run = self.fastest_run_ms_per_move
        return {
            "moves": self.moves,
            "burst_moves": self.burst_moves,
            "burst_share": round(self.burst_moves / self.moves, 3) if self.moves else None,
            "largest_burst_moves": self.largest_burst_moves,
            "silence_before_largest_burst_ms": self.silence_before_largest_burst_ms,
            "fastest_run_ms_per_move": round(run) if run is not None else None,
        }


def moves_pace(log: Sequence[str], points: Sequence[Sequence[int]]) -> MovesPace:
    """The pace of `log`'s moves, from the server's `points`: `[ms since the start,
    actions]`, in order, each saying that the actions up to that count had arrived by
    then (one per streamed action's receive time, one per save, the submission last).

    A move arrived between the point before the one that brought it and that one: a
    window of moves took at most from the first's earlier bound to the last's
    arrival. So a save of twenty actions is read as played since the save before;
    the moves that arrived with a burst, within `BURST_WINDOW_MS` of its first
    window, belong to it.
    """
    moves = _moves_arrival(log, points)
    count = len(moves)
    in_burst = [False] * count
    for first in range(count - BURST_WINDOW_MOVES + 1):
        last = first + BURST_WINDOW_MOVES - 1
        if moves[last][1] - moves[first][0] < BURST_WINDOW_MS:
            in_burst[first : last + 1] = [True] * BURST_WINDOW_MOVES
    # A burst's first moves arrived with it, after the silence (the windows above
    # read them as played during it): they belong to it.
    for start in range(count - 1, 0, -1):
        if in_burst[start] and not in_burst[start - 1]:
            earlier = start - 1
            while earlier >= 0 and moves[earlier][1] >= moves[start][1] - BURST_WINDOW_MS:
                in_burst[earlier] = True
                earlier -= 1
    largest, silence, run_start = 0, 0, None
    for index, bursting in enumerate([*in_burst, False]):
        if bursting and run_start is None:
            run_start = index
        elif not bursting and run_start is not None:
            if index - run_start > largest:
                largest, silence = index - run_start, _silence_before(moves, run_start)
            run_start = None
    fastest = min(
        (
            (moves[first + RUN_MOVES - 1][1] - moves[first][0]) / RUN_MOVES
            for first in range(count - RUN_MOVES + 1)
        ),
        default=None,
    )
    return MovesPace(count, sum(in_burst), largest, silence, fastest)


def pace_refusal(*, log: Sequence[str], times: Sequence[int], token: str, at_ms: int) -> int | None:
    """Whether action `token`, received `at_ms` after the start, keeps a streamed game
    within a person's pace: None if it does, else how many ms later it would. `log` is
    the game so far, `times` the receive time of each of its actions.

    A contest played live (a race) refuses the moves that the review would see in a
    burst (`BURST_WINDOW_MOVES` within `BURST_WINDOW_MS`) or in a run at a machine's
    pace (`RUN_MOVES` at under `RUN_MAX_MS_PER_MOVE` each). Taps are free, as in the
    review: a key held on the stock is a person's.
    """
    if token.upper() in TAPS:
        return None
    # Only the last run's moves matter: the log's tail that holds them, from the
    # start of a moment (its moves arrived after the moment before).
    start, moves = len(log), 1
    while start > 0 and moves < RUN_MOVES:
        start -= 1
        moves += log[start].upper() not in TAPS
    while 0 < start < len(log) and times[start - 1] == times[start]:
        start -= 1
    before = times[start - 1] if start > 0 else 0
    tail = [*times[start:], max(at_ms, times[-1] if times else 0)]
    arrivals = _moves_arrival([*log[start:], token], steps_of(tail), start_ms=before)
    waits = [
        math.ceil(window * ms_per_move - (arrivals[-1][1] - arrivals[-window][0]))
        for window, ms_per_move in (
            (BURST_WINDOW_MOVES, BURST_WINDOW_MS / BURST_WINDOW_MOVES),
            (RUN_MOVES, RUN_MAX_MS_PER_MOVE),
        )
        if len(arrivals) >= window
    ]
    wait = max(waits, default=0)
    return wait if wait > 0 else None


def steps_of(times: Sequence[int]) -> list[list[int]]:
    """Per-action receive times as points, `[ms, actions]`: the actions that arrived at
    one moment (one ms, a `PATCH`, the submission) make one point."""
    steps: list[list[int]] = []
    for count, time in enumerate(times, start=1):
        if steps and steps[-1][0] == time:
            steps[-1][1] = count
        else:
            steps.append([time, count])
    return steps


def _silence_before(moves: Sequence[tuple[int, int]], first: int) -> int:
    """The silence before the burst starting at move `first`: the wait for that move."""
    return moves[first][1] - (moves[first - 1][1] if first > 0 else 0)


def _moves_arrival(
    log: Sequence[str], points: Sequence[Sequence[int]], *, start_ms: int = 0
) -> list[tuple[int, int]]:
    """(earliest, arrival) ms of each move of `log`: the point before the one that
    brought it (`start_ms` for the first), and that one. A point that shortened the
    game dropped its later actions."""
    bounds: list[tuple[int, int]] = []
    previous_ms = start_ms
    for elapsed_ms, actions in points:
        del bounds[actions:]
        bounds.extend([(previous_ms, elapsed_ms)] * (actions - len(bounds)))
        previous_ms = elapsed_ms
    return [bound for token, bound in zip(log, bounds, strict=False) if token.upper() not in TAPS]


def _largest_step(points: Sequence[Sequence[int]]) -> tuple[int, int]:
    """(actions, ms of silence before it) of the save that brought the most new actions."""
    best_actions, best_silence = 0, 0
    previous_ms, previous_actions = 0, 0
    for elapsed_ms, actions in points:
        added = actions - previous_actions
        if added > best_actions:
            best_actions, best_silence = added, max(elapsed_ms - previous_ms, 0)
        previous_ms, previous_actions = elapsed_ms, actions
    return best_actions, best_silence


def _variation(times: Sequence[int]) -> float | None:
    """The coefficient of variation of the gaps between actions (0: perfectly even)."""
    gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False)]
    if len(gaps) < 2:
        return None
    # Plain floats: the statistics module's exact arithmetic costs milliseconds
    # on a long game, in every ranked submission.
    mean = math.fsum(gaps) / len(gaps)
    if mean == 0:
        return 0.0
    return math.sqrt(math.fsum((gap - mean) ** 2 for gap in gaps) / len(gaps)) / mean


# Each flag: a short name (the review queue's filter) and its reason in words,
# filled from the game's signals and the thresholds above.
FLAGS: dict[str, tuple[str, str]] = {
    "too_fast": (
        "too fast",
        "too fast: {ms_per_action} ms per action over the whole game "
        "(a person needs {min_ms_per_action} or more)",
    ),
    "burst": (
        "whole log at once",
        "{largest_step_actions} actions ({largest_step_share:.0%} of the game) arrived in "
        "one save or the submission, after {silence_before_largest_step_ms} ms of silence",
    ),
    "bursts": (
        "moves in bursts",
        "{burst_moves} moves ({burst_share:.0%} of the game's) arrived in bursts of "
        "{burst_window_moves} or more within {burst_window_ms} ms, the largest of "
        "{largest_burst_moves} after {silence_before_largest_burst_ms} ms of silence",
    ),
    "machine_pace": (
        "machine pace",
        "{run_moves} moves in a row at {fastest_run_ms_per_move} ms per move, taps of "
        "the stock and undos aside (a person needs {run_max_ms_per_move} or more)",
    ),
    "regular_times": (
        "regular times",
        "per-action times as even as a script's: variation {time_variation} "
        "(below {regular_max_variation})",
    ),
    "copied": (
        "copy of a game",
        "plays the tables of game {closest_game}: {closest_game_similarity:.0%} of the "
        "shorter game's ({closest_game_common_tables} tables in common)",
    ),
    "rehearsed": (
        "rehearsed",
        "replays game {rehearsed_game}, stored before it that day ({rehearsed_source}: the "
        "player's own, or another account's from the same browser or address): "
        "{rehearsed_similarity:.0%} of the shorter game's tables "
        "({rehearsed_common_tables} tables in common)",
    ),
    "solver_line": (
        "solver's line",
        "plays the tables of the solver's line: {solver_line_similarity:.0%} of the "
        "shorter one's ({solver_line_common_tables} tables in common)",
    ),
}


def flag_reasons(flags: Sequence[str], signals: dict[str, Any]) -> list[str]:
    """Each flag in words, with the numbers behind it, as the review queue shows them."""
    fields = {
        "min_ms_per_action": MIN_MS_PER_ACTION,
        **signals,
        "regular_max_variation": REGULAR_MAX_VARIATION,
        "burst_window_moves": BURST_WINDOW_MOVES,
        "burst_window_ms": BURST_WINDOW_MS,
        "run_moves": RUN_MOVES,
        "run_max_ms_per_move": RUN_MAX_MS_PER_MOVE,
    }
    reasons = []
    for flag in flags:
        _, words = FLAGS.get(flag, (flag, flag))
        try:
            reasons.append(words.format(**fields))
        except (KeyError, TypeError, ValueError):
            # Signals stored by an older version may lack a field: the code still says why.
            reasons.append(flag)
    return reasons
