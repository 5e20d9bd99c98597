"""Deals and move logs as clients send them: read, bounded, and refused in one shape.

The one place that turns the engine's refusals (`rules.ActionError`) into API
errors, used by submissions, saved games and hints alike, and that reads the
per-action times a ranked submission may carry.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from django.conf import settings

from easyharp_site.errors import ServiceError
from games import rules


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
    if isinstance(log, str) and log.isascii():
        tokens = log.upper().split()  # what a client sends: one pass in C
    else:
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


def illegal_action(error: rules.ActionError) -> ServiceError:
    """The 400 `illegal_action` for a log the rules engine refused or could not read.

    Carries the engine's 1-based `index`, `token` (cut to its first characters),
    English `reason`, stable
    `reason_code` and the `params` of its reason (machine-readable: column
    numbers, `W`, foundation numbers, cards), so that a client can word the
    reason in the player's language without parsing English.
    """
    return ServiceError(
        "illegal_action",
        str(error),
        index=error.index,
        token=error.token_shown,
        reason=error.reason,
        reason_code=error.code,
        params=error.params,
    )


def log_replay(deal: rules.Deal, tokens: Sequence[str]) -> rules.Game:
    """The engine's replay of `tokens` from `deal`; a refused log is a 400 `illegal_action`."""
    try:
        return rules.replay(deal, tokens)
    except rules.ActionError as error:
        raise illegal_action(error) from None


def times_check(times: Sequence[object], *, actions: int, latest_ms: int | None) -> list[int]:
    """Per-action times as whole milliseconds, or a 400 `invalid_times` saying which is wrong.

    One time per action (milliseconds since the attempt started, as numbers;
    fractions are dropped), never decreasing, and the last no later than
    `latest_ms` (the server-measured duration plus an allowance; None: no
    bound, for a game without an attempt). The refusal carries the 1-based
    `index` of the first bad time (None when the count is wrong) and a
    machine-readable `reason_code`, like a refused log.
    """
    if len(times) != actions:
        raise _bad_times(
            None, "count", f"There is one time per action: {actions} expected, {len(times)} sent."
        )
    checked: list[int] = []
    previous = 0
    for index, value in enumerate(times, start=1):
        # `type() is`: True is an int to isinstance, and no time.
        if type(value) is int:
            milliseconds = value
        elif type(value) is float and math.isfinite(value):
            milliseconds = int(value)
        else:
            raise _bad_times(
                index, "not_a_number", f"Time {index} is not a number of milliseconds."
            )
        if value < 0:
            raise _bad_times(index, "out_of_range", f"Time {index} is not a time since the start.")
        if milliseconds < previous:
            raise _bad_times(
                index, "decreasing", f"Time {index} ({milliseconds} ms) is before time {index - 1}."
            )
        previous = milliseconds
        checked.append(milliseconds)
    if latest_ms is not None and checked and checked[-1] > latest_ms:
        raise _bad_times(
            len(checked),
            "after_submission",
            f"The last time ({checked[-1]} ms) is later than the server measured the game "
            f"({latest_ms} ms with the allowance).",
            latest_ms=latest_ms,
        )
    return checked


def _bad_times(index: int | None, reason_code: str, message: str, **extra: Any) -> ServiceError:
    return ServiceError("invalid_times", message, index=index, reason_code=reason_code, **extra)
