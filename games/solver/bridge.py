"""From the rules engine to the solver and back: positions in, checked logs out."""

from __future__ import annotations

from collections.abc import Iterable

from games.rules import Deal, Game, replay
from games.solver.position import Position
from games.solver.solver import Solution, solve_position


def position_of_game(game: Game) -> Position:
    """The solver's view of a game's table, face-down cards included."""
    table = game.position()
    # The engine keeps the stock top-last; the pool starts with the waste
    # (bottom to top), then the stock in the order taps turn it up.
    pool = tuple(card % 52 for card in table.waste) + tuple(
        card % 52 for card in reversed(table.stock)
    )
    return Position(
        columns=tuple(
            tuple(card % 52 for card in (*down, *up))
            for down, up in zip(table.down, table.up, strict=True)
        ),
        down=tuple(len(down) for down in table.down),
        pool=pool,
        waste=len(table.waste),
        foundations=tuple(len(pile) for pile in table.foundations),
    )


def solve_game(
    game: Game,
    *,
    seconds: float = 10.0,
    nodes: int = 10_000_000,
    shorten_seconds: float | None = None,
) -> Solution:
    """Search for a win from the game's current table.

    A won answer is checked by playing its log on a copy of the game: the
    engine, not the solver, has the last word on what is legal.
    """
    if game.is_won:
        return Solution("won", (), 0, 0.0)
    solution = solve_position(
        position_of_game(game), seconds=seconds, nodes=nodes, shorten_seconds=shorten_seconds
    )
    if solution.result == "won":
        check = game.copy()
        check.play_log(solution.log)
        if not check.is_won:
            raise AssertionError(f"the solver's log does not win: {' '.join(solution.log)}")
    return solution


def solve(
    deal: Deal | str | int,
    log: str | Iterable[str] = (),
    *,
    seconds: float = 10.0,
    nodes: int = 10_000_000,
    shorten_seconds: float | None = None,
) -> Solution:
    """Search for a win of ``deal`` from the table after ``log`` (the whole game by default).

    ``log`` is replayed by the engine first, so a refused log raises the
    engine's `IllegalActionError` / `InvalidActionError` (both `ValueError`).
    The answer's log continues ``log``: ``replay(deal, log + answer.log)`` wins.
    """
    return solve_game(
        replay(deal, log), seconds=seconds, nodes=nodes, shorten_seconds=shorten_seconds
    )
