"""From the rules engine to the solver and back: positions in, checked logs out."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal

from games.rules import Deal, Game, replay
from games.solver.decide import Solution, decide
from games.solver.layout import Layout
from games.solver.polish import Polisher
from games.solver.search import Searcher, Weights
from games.solver.work import CAP_SECONDS, HINT, PAR, Cap, Work

# Last, the end of the win is searched again from points along it (30 %, 50 %
# and 70 % of its actions): with less left to play, a beam three times as wide
# fits in the same work (`Work.tail_nodes`). A shorter end found is polished on
# its own (`Work.tail_tries`).
TAIL_CUTS = (0.3, 0.5, 0.7)
TAIL_WIDTH = 30
TAIL_WEIGHTS = Weights(cover=3.0, loose=1.0, found=2.0)


def position_of_game(game: Game) -> Layout:
    """The solver's view of a game's table, face-down cards included."""
    table = game.position()
    # The engine keeps the stock top-last; the pool starts with the waste
    # (bottom to top), then the stock in the order taps turn it up.
    pool = tuple(card % 52 for card in table.waste) + tuple(
        card % 52 for card in reversed(table.stock)
    )
    return Layout(
        columns=tuple(
            tuple(card % 52 for card in (*down, *up))
            for down, up in zip(table.down, table.up, strict=True)
        ),
        down=tuple(len(down) for down in table.down),
        pool=pool,
        waste=len(table.waste),
        foundations=tuple(len(pile) for pile in table.foundations),
    )


def solve_game(game: Game, *, work: Work = PAR, seconds: float = CAP_SECONDS) -> Solution:
    """Search for a win from the game's current table, then shorten it.

    The shortening runs in three stages: beam searches from the start
    (`games.solver.decide`), reordering the best wins so that they tap the
    stock less (`games.solver.polish`), then searching the end of the best one
    again (`shorten_tail`). Every stage does the fixed amount of work that
    ``work`` counts, so the answer is a pure function of the table and the
    work; ``seconds`` only caps the whole, and an answer it cut short says so
    (`Solution.cut_short`). A won answer is checked by playing its log on a
    copy of the game: the engine, not the solver, has the last word on what
    is legal.
    """
    if game.is_won:
        return Solution("won", (), 0, 0.0, 0.0)
    cap = Cap(seconds)
    solution = decide(position_of_game(game), work, cap)
    if solution.result != "won":
        return solution
    log, expanded = solution.log, 0
    if work.shortens:
        polisher = Polisher(game)
        # The shortest raw win does not always polish best: give the last few
        # wins found a quick polish each, then polish the best of them fully.
        candidates = [*solution.others[-2:], solution.log]
        polished = [
            polisher.polish(log, cap, thorough=False, tries=work.quick_tries) for log in candidates
        ]
        log = polisher.polish(min(polished, key=len), cap, tries=work.thorough_tries)
        log, expanded = shorten_tail(game, log, work, cap)
    check = game.copy()
    check.play_log(" ".join(log))
    if not check.is_won:
        raise AssertionError(f"the solver's log does not win: {' '.join(log)}")
    return replace(
        solution,
        log=log,
        nodes=solution.nodes + expanded,
        seconds=cap.elapsed(),
        others=(),
        cut_short=cap.hit,
    )


def shorten_tail(
    game: Game, log: tuple[str, ...], work: Work, cap: Cap
) -> tuple[tuple[str, ...], int]:
    """``log`` (a win from ``game``) with its end replaced by shorter ones where
    a beam search from a point along it finds one; and the positions expanded.

    A fixed amount of work (`Work.tail_nodes`, `Work.tail_tries` per cut); the
    ``cap`` only stops it when time is up.
    """
    expanded = 0
    for fraction in TAIL_CUTS if work.tail_nodes else ():
        if cap.over():
            break
        cut = int(len(log) * fraction)
        middle = game.copy()
        middle.play_log(" ".join(log[:cut]))
        outcome = Searcher.from_position(position_of_game(middle)).beam(
            width=TAIL_WIDTH,
            weights=TAIL_WEIGHTS,
            max_nodes=work.tail_nodes,
            cap=cap,
            max_moves=len(log) - cut,
        )
        expanded += outcome.expanded
        if outcome.won is None:
            continue
        tail = Polisher(middle).polish(tuple(outcome.won.log()), cap, tries=work.tail_tries)
        if cut + len(tail) < len(log):
            log = (*log[:cut], *tail)
    return log, expanded


def solve(
    deal: Deal | str | int,
    log: str | Iterable[str] = (),
    *,
    work: Work = PAR,
    seconds: float = CAP_SECONDS,
) -> Solution:
    """Search for a win of ``deal`` from the table after ``log`` (the whole game by default).

    ``log`` is replayed by the engine first, so a refused log raises the
    engine's `IllegalActionError` / `InvalidActionError` (both `ValueError`).
    The answer's log continues ``log``: ``replay(deal, log + answer.log)`` wins.
    With the default `PAR` work, the answer from the start of a deal is the
    deal's par.
    """
    return solve_game(replay(deal, log), work=work, seconds=seconds)


@dataclass(frozen=True, slots=True)
class Hint:
    """The next action of a win, or why there is none.

    ``result`` is "move" (``action`` holds the next action of a win, and
    ``moves_to_win`` the move count of that win from here), "lost" (no
    sequence of actions wins from here), "unknown" (the work ran out, or the
    time cap) or "won" (the game is already won: nothing is left to play).
    ``cut_short`` as in `Solution`: the time cap stopped the work, so another
    ask may answer otherwise.
    """

    result: Literal["move", "lost", "unknown", "won"]
    action: str | None
    moves_to_win: int | None
    seconds: float
    cut_short: bool = False


def hint(
    deal: Deal | str | int,
    log: str | Iterable[str] = (),
    *,
    work: Work = HINT,
    seconds: float = CAP_SECONDS,
) -> Hint:
    """The next action of a win from the table after ``log``.

    A refused ``log`` raises the engine's error (a `ValueError`). The win is
    found and shortened with the fixed `HINT` work (about a fifth of the
    par's, so that a hint comes in seconds): the same table always gets the
    same hint, unless the time cap ``seconds`` cut the work short.
    """
    game = replay(deal, log)
    if game.is_won:
        return Hint("won", None, None, 0.0)
    solution = solve_game(game, work=work, seconds=seconds)
    if solution.result == "won":
        return Hint("move", solution.log[0], solution.moves, solution.seconds, solution.cut_short)
    return Hint(solution.result, None, None, solution.seconds, solution.cut_short)
