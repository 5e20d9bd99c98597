"""The heavy work of requests, as pure functions of the engine and the solver.

They run in the processes of `games.pool`, away from the server process, so
they import neither Django nor the project's other layers: only the engine and
the solver (and what they take and give back pickles).

- `hint_find`: the solver's hint for a position (seconds of CPU).
- `replay_build`: a game's replay, `start` and compact `steps`, as gzipped JSON
  (about a second of CPU for 20,000 actions).
"""

from __future__ import annotations

import gzip
import json
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from games import rules
from games.solver import HINT, Hint, hint

# gzip's level 6: the body is built once and kept, and the steps' JSON gains
# little from a higher level.
GZIP_LEVEL = 6


def process_start(niceness: int) -> None:
    """Each pool process runs at a lower CPU priority (`niceness`, 0 to 19): the server
    processes on the same machine answer first, and the heavy work takes what is left.
    It ends with its server process, however that stops (a pool process waiting for
    work would otherwise outlive a server killed or stopped by a signal)."""
    os.nice(niceness)
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def hint_find(deal_number: int, tokens: Sequence[str], decide: int, seconds: float) -> Hint:
    """`games.solver.hint` for the table after `tokens` in deal `deal_number`, deciding
    within `decide` positions; raises the engine's `ActionError` for a refused log."""
    return hint(rules.Deal(deal_number), list(tokens), work=replace(HINT, decide=decide),
                seconds=seconds)  # fmt: skip


def replay_data(*, game_id: int | None, deal_number: int, log: str) -> dict[str, Any]:
    """`{game, deal, rules_version, start, steps}`: the deal's table once, then what
    each action changed, in one pass of the engine. `game` is the stored game's
    id, null for a day's par line.

    `start` is `rules.Game.table()` of the deal. Step i holds `token`, action i,
    and every field of the table that action i changed: `stock`, `waste`,
    `waste_top`, `score`, `moves`, `won` and `undo_left` with their new values;
    `columns`, a list of `[column, down, kept, *cards]` (the column now has
    `down` face-down cards, keeps its first `kept` face-up cards, and `cards` on
    them); `foundations`, a list of `[slot, count, top]`. Applying the steps in
    order rebuilds every table of the game exactly (`games/static/games/frames.js`
    does so in the browser). A long game's replay is then a small fraction of
    every table in full (docs/RELIABILITY.md).
    """
    deal = rules.Deal(deal_number)
    played = rules.Game(deal)
    start = before = played.table()
    steps = []
    for token in log.split():
        played.play(token)
        after = played.table()
        steps.append(_step(token, before, after))
        before = after
    return {
        "game": game_id,
        "deal": deal.code,
        "rules_version": rules.RULES_VERSION,
        "start": start,
        "steps": steps,
    }


def replay_build(*, game_id: int | None, deal_number: int, log: str) -> bytes:
    """`replay_data` as the API serves it: compact JSON, gzipped."""
    data = replay_data(game_id=game_id, deal_number=deal_number, log=log)
    body = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
    return gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0)


# The fields of a table that are one value each (`deal` never changes).
_STEP_VALUES = ("stock", "waste", "waste_top", "score", "moves", "won", "undo_left")


def _step(token: str, before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What one action changed from table `before` to table `after` (see replay_data)."""
    step: dict[str, Any] = {"token": token}
    for key in _STEP_VALUES:
        if after[key] != before[key]:
            step[key] = after[key]
    columns = []
    for index, (old, new) in enumerate(zip(before["columns"], after["columns"], strict=True)):
        if new != old:
            kept = 0
            for old_card, new_card in zip(old["up"], new["up"], strict=False):
                if old_card != new_card:
                    break
                kept += 1
            columns.append([index, new["down"], kept, *new["up"][kept:]])
    if columns:
        step["columns"] = columns
    foundations = [
        [slot, new["count"], new["top"]]
        for slot, (old, new) in enumerate(
            zip(before["foundations"], after["foundations"], strict=True)
        )
        if new != old
    ]
    if foundations:
        step["foundations"] = foundations
    return step
