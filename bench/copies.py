"""How alike honest games of one deal are, and how alike copies are to their originals.

The copy check (`games.copies`) flags a ranked game when its similarity to an
earlier game of the deal (the share of the shorter game's tables the other
passes too) is at least `COPY_SIMILARITY`, on `COPY_MIN_TABLES` tables or more.
This measures both between:

- honest independent games of the same deal: the solver's lines with different
  work (first win, hint, two beam widths), random players (legal random play
  preferring the foundations and uncovering cards, for a random number of
  actions, then finished by the solver; won games kept), and the conformance
  vectors' games of more than 60 actions against the solver's first win of
  their deal;
- copies and their originals: two and five pairs of independent moves swapped,
  moves inserted (a move taken back, a stock cycle, a card moved away and
  back), both, the original's first 80 % of play (of its actions that
  change the table) finished differently, and its first 90 % and 70 % of
  actions (a watcher copying it live who stops there) finished by the solver.

It prints the distributions (max and p99 of the honest pairs, min of the
copies), of the similarity, of the tables in common and of the shared prefix
(`copies.shared_prefix`; an honest pair's, the larger of its two ways round),
and how many of the earlier game's `SKETCH_SIZE` sketch hashes are tables of
the new one (what the lookup counts):

    .venv/bin/python bench/copies.py                 # deals 1 2 4 5 26, 6 players each
    .venv/bin/python bench/copies.py --deals 4 7 --players 10 --seed 3
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "easyharp_site.settings")

import django  # noqa: E402

django.setup()

from games import copies  # noqa: E402
from games.rules import Game, replay  # noqa: E402
from games.solver import FIRST_WIN, HINT, Work, solve  # noqa: E402

VECTORS = ROOT / "tests" / "vectors" / "games.jsonl"


@dataclass(frozen=True)
class Played:
    kind: str
    deal: int
    log: list[str]
    won: bool

    def tables(self) -> frozenset[int]:
        return copies.game_tables(deal_number=self.deal, log=self.log, won=self.won)

    def order(self) -> tuple[int, ...]:
        """Its tables in the order its line first reached them."""
        _, timeline = copies.game_read(
            deal_number=self.deal, log=self.log, won=self.won, times=[0] * len(self.log)
        )
        return timeline.order


# --- Honest games -------------------------------------------------------------------


def solver_lines(deal: int) -> list[Played]:
    """The solver's wins of `deal` with different work."""
    works = {
        "solver first win": FIRST_WIN,
        "solver hint work": HINT,
        "solver beam 3": Work(decide=100_000, beam_nodes=4_000, beam_width=3),
        "solver beam 6": Work(decide=100_000, beam_nodes=4_000, beam_width=6, quick_tries=300),
    }
    lines = []
    for kind, work in works.items():
        solution = solve(deal, work=work, seconds=60)
        if solution.result == "won":
            lines.append(Played(kind, deal, list(solution.log), True))
    return lines


def random_play(deal: int, actions: int, rng: random.Random) -> list[str]:
    """Legal random play of `actions` actions at most, preferring the foundations,
    then moves that uncover a card or bring one from the waste; no table twice."""
    game = Game(deal)
    seen = {game.table_hash()}
    log: list[str] = []
    taps = 0
    while len(log) < actions and not game.is_won:
        table = game.table()
        columns = table["columns"]
        found, useful, other = [], [], []
        for token in game.legal_actions():
            if token in ("U", "S") or token.startswith("F"):
                continue
            if "F" in token:
                found.append(token)
            elif token.startswith("W"):
                useful.append(token)
            else:
                source = columns[int(token[0]) - 1]
                lone = len(source["up"]) == 1 or source["up"][0].startswith("K")
                (useful if lone and source["down"] else other).append(token)
        for group in (found, useful, other):
            rng.shuffle(group)
        order = found + useful if rng.random() > 0.15 else useful + found
        if rng.random() < 0.2:
            order += other
        for token in order:
            game.play(token)
            if game.table_hash() in seen:
                game.undo()
                continue
            seen.add(game.table_hash())
            log.append(token)
            taps = 0
            break
        else:
            pool = table["stock"] + table["waste"]
            if pool == 0 or taps > pool:
                break
            game.play("S")
            log.append("S")
            taps += 1
    while log and log[-1] == "S":
        log.pop()
    return log


def random_player(deal: int, rng: random.Random) -> Played | None:
    """A random player's game finished by the solver (None when it could not be won)."""
    start = random_play(deal, rng.randint(20, 160), rng)
    for cut in (1.0, 0.5, 0.0):
        prefix = start[: int(len(start) * cut)]
        solution = solve(deal, prefix, work=FIRST_WIN, seconds=5)
        if solution.result == "won":
            return Played("random player", deal, [*prefix, *solution.log], True)
    return None


def vector_games() -> list[Played]:
    """The conformance vectors' accepted games of more than 60 actions."""
    games = []
    for line in VECTORS.read_text().splitlines():
        vector = json.loads(line)
        log = vector["log"].split()
        if "refused_at" in vector or len(log) <= 60:
            continue
        deal = Game(vector["deal"]).deal.number
        games.append(Played("vectors", deal, replay(deal, log).log, bool(vector["won"])))
    return games


# --- Copies ---------------------------------------------------------------------------


def swapped(played: Played, pairs: int, rng: random.Random) -> list[str]:
    """The log with `pairs` pairs of adjacent independent moves swapped (early ones first)."""
    log = list(played.log)
    game = Game(played.deal)
    swaps = 0
    for i in range(len(log) - 1):
        if swaps >= pairs:
            break
        first, second = log[i], log[i + 1]
        if "S" in (first, second) or "U" in (first, second):
            game.play(first)
            continue
        trial = game.copy()
        straight = game.copy()
        if trial.is_legal(second):
            trial.play(second)
            if trial.is_legal(first):
                trial.play(first)
                straight.play_log([first, second])
                if trial.position() == straight.position() and rng.random() < 0.7:
                    log[i], log[i + 1] = second, first
                    swaps += 1
        game.play(log[i])
    assert replay(played.deal, log).is_won == played.won
    return log


def inserted(played: Played, rng: random.Random, log: list[str] | None = None) -> list[str]:
    """The log with moves inserted at random places: a move taken back, a whole stock
    cycle, and a card moved away and brought back."""
    log = list(log or played.log)
    for insertion in ("undo", "cycle", "detour", "undo", "detour"):
        for _ in range(50):
            at = rng.randint(1, len(log) - 2)
            game = replay(played.deal, log[:at])
            extra = _insertion(game, insertion, rng)
            if extra:
                trial = [*log[:at], *extra, *log[at:]]
                try:
                    if replay(played.deal, trial).is_won == played.won:
                        log = trial
                        break
                except ValueError:
                    continue
    return log


def _insertion(game: Game, kind: str, rng: random.Random) -> list[str]:
    moves = [t for t in game.legal_actions() if t not in ("S", "U")]
    if kind == "undo" and moves:
        return [rng.choice(moves), "U"]
    if kind == "cycle":
        table = game.table()
        return ["S"] * (table["stock"] + table["waste"] + 1)
    if kind == "detour":
        for token in rng.sample(moves, len(moves)):
            if len(token) == 2 and token.isdigit():
                back = token[::-1]
                trial = game.copy()
                trial.play(token)
                if trial.is_legal(back):
                    trial.play(back)
                    if trial.position() == game.position():
                        return [token, back]
    return []


def prefix_finished(played: Played) -> list[str] | None:
    """The original's first 80 % of play (of its actions that change the table: not its
    stock taps or undos), finished by the solver."""
    moves = [i for i, token in enumerate(played.log) if token not in ("S", "U")]
    return _finished(played, played.log[: moves[int(len(moves) * 0.8)]])


def actions_finished(played: Played, share: float) -> list[str] | None:
    """The original's first `share` of actions (taps included: what a watcher copying it
    live has played when they stop), finished by the solver."""
    return _finished(played, played.log[: int(len(played.log) * share)])


def _finished(played: Played, prefix: list[str]) -> list[str] | None:
    solution = solve(played.deal, prefix, work=FIRST_WIN, seconds=10)
    return [*prefix, *solution.log] if solution.result == "won" else None


# --- Measuring ------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    kind: str
    similarity: float
    common: int
    # Of the earlier game's sketch, how many hashes are tables of the new one (the
    # lookup's count, which the replay gate reads).
    sketch_shared: int
    # The shared prefix (`copies.shared_prefix`) of the new game with the earlier one;
    # for honest pairs the larger of the two ways round.
    prefix: int


def pair(kind: str, new: Played, earlier: Played, *, both_ways: bool = False) -> Pair:
    tables, other = new.tables(), earlier.tables()
    found = copies.match(tables, other, game=None)
    looked_up = heapq.nsmallest(copies.LOOKUP_TABLES, copies.sketch_key(tables))
    shared = len(set(copies.sketch(other)) & set(looked_up))
    prefix = copies.shared_prefix(new.order(), other)
    if both_ways:
        prefix = max(prefix, copies.shared_prefix(earlier.order(), tables))
    return Pair(kind, found.similarity, found.common, shared, prefix)


def is_copy(found: Pair) -> bool:
    """The flag, for a game that followed the other throughout by the server's clock
    (the live copies': the honest pairs are measured as if they had too)."""
    return copies.is_copy(
        copies.Match(
            game=None,
            common=found.common,
            similarity=found.similarity,
            later=found.common,
            prefix=found.prefix,
        )
    )


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def report(title: str, pairs: list[Pair], summary: Callable[[list[float]], str]) -> None:
    print(f"\n{title}: {len(pairs)} pairs")
    kinds = sorted({p.kind for p in pairs})
    print(
        f"  {'kind':<38} {'n':>5} {'similarity':>28} {'tables in common':>20} "
        f"{'shared prefix':>20} {'sketch shared':>16}"
    )
    for kind in [*kinds, "all"]:
        chosen = [p for p in pairs if kind in ("all", p.kind)]
        shares = [p.similarity for p in chosen]
        common = [p.common for p in chosen]
        sketch = [p.sketch_shared for p in chosen]
        prefix = [float(p.prefix) for p in chosen]
        print(
            f"  {kind:<38} {len(chosen):>5} {summary(shares):>28} "
            f"{summary([float(c) for c in common]):>20} {summary(prefix):>20} "
            f"{max(sketch):>8} max {min(sketch):>3} min"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, nargs="+", default=[1, 2, 4, 5, 26])
    parser.add_argument("--players", type=int, default=6, help="random players per deal")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    began = time.monotonic()

    honest: list[Pair] = []
    copied: list[Pair] = []
    for deal in args.deals:
        games = solver_lines(deal)
        while sum(g.kind == "random player" for g in games) < args.players:
            player = random_player(deal, rng)
            if player is not None:
                games.append(player)
        # The similarity is symmetric, the prefix taken both ways: each pair once.
        for i, a in enumerate(games):
            for j in range(i + 1, len(games)):
                kinds = " / ".join(sorted((a.kind.split()[0], games[j].kind.split()[0])))
                honest.append(pair(kinds, a, games[j], both_ways=True))
        for original in games:
            swap2 = swapped(original, 2, rng)
            variants = {
                "two swaps": swap2,
                "five swaps": swapped(original, 5, rng),
                "moves inserted": inserted(original, rng),
                "two swaps and moves inserted": inserted(original, rng, swap2),
                "first 80 %, finished otherwise": prefix_finished(original),
                "first 90 % of actions, then the solver": actions_finished(original, 0.9),
                "first 70 % of actions, then the solver": actions_finished(original, 0.7),
            }
            for kind, log in variants.items():
                if log is not None:
                    copied.append(pair(kind, Played(kind, deal, log, True), original))
        print(f"deal {deal}: {len(games)} honest games ({time.monotonic() - began:.0f} s)")

    for vector in vector_games():
        for other in solver_lines_quick(vector.deal):
            honest.append(pair("vectors / solver", vector, other, both_ways=True))

    def honest_summary(values: list[float]) -> str:
        return (
            f"max {max(values):.3f} p99 {percentile(values, 0.99):.3f} "
            f"med {statistics.median(values):.3f}"
        )

    def copy_summary(values: list[float]) -> str:
        return f"min {min(values):.3f} med {statistics.median(values):.3f}"

    report("Honest independent games", honest, honest_summary)
    report("Copies against their originals", copied, copy_summary)
    print(
        f"\nthreshold: similarity >= {copies.COPY_SIMILARITY}, "
        f"on {copies.COPY_MIN_TABLES} tables or more; or, followed throughout, a shared "
        f"prefix of {copies.PREFIX_MIN_TABLES} tables; sketch of {copies.SKETCH_SIZE}, "
        f"replayed from {copies.MIN_SKETCH_SHARED} shared"
    )
    flagged = [p for p in honest if is_copy(p)]
    missed = [p for p in copied if not is_copy(p)]
    gated = [p for p in copied if p.sketch_shared < copies.MIN_SKETCH_SHARED]
    print(
        f"honest pairs flagged: {len(flagged)}; copies missed: {len(missed)}, "
        f"of which below the sketch gate: {len(gated)}"
    )
    print(f"({time.monotonic() - began:.0f} s)")


def solver_lines_quick(deal: int) -> list[Played]:
    solution = solve(deal, work=FIRST_WIN, seconds=10)
    return (
        [Played("solver first win", deal, list(solution.log), True)]
        if solution.result == "won"
        else []
    )


if __name__ == "__main__":
    main()
