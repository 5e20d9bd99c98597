"""Deals whose hints an app above games holds back for a while (a running race's deal).

The solver's hint on a deal is its answer; while some contest on a deal runs,
nobody should get it. The daily contest's own rule is `selectors.hint_lock`;
the apps above (which games may not import) register here, from their
`AppConfig.ready`, a function that says whether a deal is held now, and why.
"""

from __future__ import annotations

from collections.abc import Callable

from easyharp_site.errors import ServiceError

# Each app's: the refusal of a hint on deal number `n` now, or None.
Hold = Callable[[int], ServiceError | None]

_HOLDS: dict[str, Hold] = {}


def deal_hold_register(*, app: str, hold: Hold) -> None:
    """Register an app's hold on deals (again: replaces it)."""
    _HOLDS[app] = hold


def deal_held(*, number: int) -> ServiceError | None:
    """Why hints on deal `number` are held back now (the first app's reason), or None."""
    for hold in _HOLDS.values():
        refusal = hold(number)
        if refusal is not None:
            return refusal
    return None
