"""Plausibility signals of a ranked game, computed once at submission for the moderators.

Pure functions of what the server saw: its own clock (the attempt's start,
each save, the submission) and the per-action times the client sent. Whether
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

    step_actions, step_silence = _largest_step([*saves, [duration_ms, actions]])
    if won and step_actions >= BURST_MIN_ACTIONS and step_actions >= BURST_SHARE * actions:
        flags.append("burst")

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
    }
    return Review(signals, flags)


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
