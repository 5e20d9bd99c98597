"""Benchmark of the costliest public read: the replay of a GAME_MAX_ACTIONS-action game.

    .venv/bin/python bench/replay.py [--actions 20000] [--repeat 3] [--seed 1]

It plays one random legal game of `--actions` actions (bench/engine.py's mix
of taps, recycles, column moves, foundations and undos; a fixed seed), then
does what `GET /api/games/{id}/replay/` does with it: replay the log, build the
body, render it as JSON (DRF's renderer) and gzip it, as served now (`start`
and compact `steps`, `games.replays.game_replay`) and as served before (a
frame per action with its whole table). For each it prints the body's size,
plain and gzipped, the CPU seconds to build, render and compress it (the best
of `--repeat`), and the peak memory of one request (tracemalloc, measured in a
separate run because tracing slows Python down).

No database: the game is an unsaved model instance.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "easyharp_site.settings")

import django  # noqa: E402

django.setup()

from django.utils.text import compress_string  # noqa: E402
from rest_framework.renderers import JSONRenderer  # noqa: E402

from bench.engine import random_log  # noqa: E402
from games import rules  # noqa: E402
from games.models import Game  # noqa: E402
from games.replays import game_replay  # noqa: E402


def full_frames(game: Game) -> dict[str, Any]:
    """The replay as it was served before: every table in full, one frame per action."""
    played = rules.Game(rules.Deal(game.deal_number))
    frames = [{"index": 0, "token": None, "score": 0, "moves": 0, "table": played.table()}]
    for index, token in enumerate(game.log.split(), start=1):
        played.play(token)
        frames.append(
            {
                "index": index,
                "token": token,
                "score": played.score,
                "moves": played.moves,
                "table": played.table(),
            }
        )
    return {"game": game.pk, "deal": game.deal_code, "frames": frames}


def serve(build: Callable[[Game], dict[str, Any]], game: Game) -> tuple[int, int]:
    """Build, render and gzip one replay as the view does; (plain, gzipped) sizes."""
    body = JSONRenderer().render(build(game))
    # Django's GZipMiddleware (the view's `gzip_page`) compresses with this.
    return len(body), len(compress_string(body))


def measure(
    build: Callable[[Game], dict[str, Any]], game: Game, repeat: int
) -> tuple[int, int, float, int]:
    """(plain bytes, gzipped bytes, best CPU seconds, peak traced bytes) of one replay."""
    seconds = []
    for _ in range(repeat):
        started = time.process_time()
        plain, packed = serve(build, game)
        seconds.append(time.process_time() - started)
    tracemalloc.start()
    serve(build, game)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return plain, packed, min(seconds), peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--actions", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--deal", type=int, default=7)
    options = parser.parse_args()

    deal = rules.Deal(options.deal)
    log = random_log(deal, options.actions, random.Random(options.seed))
    game = Game(deal_number=deal.number, log=log, rules_version=rules.RULES_VERSION)
    print(
        f"{len(log.split()):,} actions on {deal.code} (seed {options.seed}); "
        f"load average {os.getloadavg()[0]:.2f} (1 min)"
    )
    print(f"{'replay':<22} {'JSON':>12} {'gzipped':>10} {'CPU s':>7} {'peak MB':>8}")
    compact: Callable[[Game], dict[str, Any]] = lambda game: game_replay(game=game)  # noqa: E731
    for name, build in (("before: full tables", full_frames), ("now: compact steps", compact)):
        plain, packed, seconds, peak = measure(build, game, options.repeat)
        print(f"{name:<22} {plain:>12,} {packed:>10,} {seconds:>7.2f} {peak / 1e6:>8.1f}")


if __name__ == "__main__":
    main()
