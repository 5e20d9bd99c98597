"""Shortening a won log by reordering its moves so that the stock is tapped less.

Most of a first win's length is stock taps: the search picks pool cards in
whatever order its moves need them, and each card far from the top of the
waste costs taps, a card already passed costs a whole recycle. The moves
themselves can often be done in another order. This pass keeps the moves
(without their taps) as a plan, tries moving each play from the waste earlier
or later, writes the taps out again for the new order, and keeps a change when
the log gets shorter and the rules engine still plays it to a win.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass

from games.rules import Game
from games.solver.search import nearest
from games.solver.work import Cap

WINDOW = 40  # how far a play from the waste is moved at most, in moves


@dataclass(frozen=True, slots=True)
class Step:
    """One move of a plan.

    ``card`` is the card value it takes from the waste, if any; ``touches``
    what it changes: columns 0..8 and the suits' pairs of foundations 9..12.
    Two plans that make the same moves on every column and every suit's
    foundations in the same order see the same card under every move, so each
    move stays legal whatever the order of the steps that share nothing.
    """

    token: str
    card: int | None
    touches: tuple[int, ...] = ()


def _touches(play: Game, token: str, card: int | None) -> tuple[int, ...]:
    """What ``token``, about to be played in ``play``, changes (see `Step`)."""
    if token.startswith("W"):
        target = token[1:]
        if target.startswith("F"):
            assert card is not None
            return (9 + card // 13,)
        return (int(target) - 1,)
    if token.startswith("F"):  # F<n><column>: a card back from foundation n
        return (9 + (int(token[1]) - 1) // 2, int(token[2:]) - 1)
    source = int(token[0]) - 1
    if token[1] == "F":
        return (source, 9 + play.position().up[source][-1] % 52 // 13)
    return (source, int(token[1:]) - 1)


def plan_of(game: Game, log: tuple[str, ...]) -> list[Step]:
    """The moves of ``log`` played from ``game``, taps left out, waste cards named."""
    play = game.copy()
    steps: list[Step] = []
    for token in log:
        if token != "S":
            card = play.position().waste[-1] % 52 if token.startswith("W") else None
            steps.append(Step(token, card, _touches(play, token, card)))
        play.play(token)
    return steps


class Polisher:
    """Writes plans out with the fewest taps each, and checks them with the engine."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.tries = 0  # orders tried so far: the measure of the work done
        self.max_tries = 0
        table = game.position()
        self.pool = tuple(card % 52 for card in table.waste) + tuple(
            card % 52 for card in reversed(table.stock)
        )
        self.cursor = len(table.waste)
        self.where: dict[int, tuple[int, ...]] = {}
        for index, card in enumerate(self.pool):
            self.where[card] = (*self.where.get(card, ()), index)

    def _before(self, mask: int, cursor: int, step: Step) -> tuple[int, int, int] | None:
        """Taps, cursor and mask once ``step`` is played (None: its pool card is gone)."""
        if step.card is None:
            return 0, cursor, mask
        return self._take_card(mask, cursor, step.card)

    def _take_card(self, mask: int, cursor: int, card: int) -> tuple[int, int, int] | None:
        """Taps, cursor and mask after taking the cheapest copy of ``card`` (None: none left)."""
        best = nearest(self.where.get(card, ()), mask, cursor)
        if best is None:
            return None
        taps, after, index = best
        return taps, after, mask & ~(1 << index)

    def states(self, plan: list[Step]) -> list[tuple[int, int, int]] | None:
        """(mask, cursor, log length) before each step of ``plan`` and after the last one."""
        mask = (1 << len(self.pool)) - 1
        cursor = self.cursor
        length = 0
        states = [(mask, cursor, length)]
        for step in plan:
            taken = self._before(mask, cursor, step)
            if taken is None:
                return None
            taps, cursor, mask = taken
            length += taps + 1
            states.append((mask, cursor, length))
        return states

    def write(self, plan: list[Step]) -> list[str]:
        """The log of ``plan`` with the fewest taps before each play from the waste."""
        mask = (1 << len(self.pool)) - 1
        cursor = self.cursor
        tokens: list[str] = []
        for step in plan:
            taken = self._before(mask, cursor, step)
            if taken is None:
                raise LookupError(f"card {step.card} is not in the pool")
            taps, cursor, mask = taken
            tokens.extend(["S"] * taps)
            tokens.append(step.token)
        return tokens

    def schedule(self, plan: list[Step]) -> list[Step]:
        """An order of ``plan``'s steps with few stock taps in which every column and
        every suit's foundations still see their moves in the same order.

        Within that partial order a step that does not take a pool card costs
        one action whenever it is played, and playing it only frees later
        steps, so those are played as soon as they can be. Then the pool card
        that the fewest taps bring up is taken: the cursor passes every card
        on its way anyway, so a ready card is never left for another pass.
        (Where a card's two copies are both in the pool, the nearer one is
        taken, which is not always best: the order is good, not proven best.)
        """
        count = len(plan)
        waiting = [0] * count
        after: list[list[int]] = [[] for _ in range(count)]
        last: dict[int, int] = {}
        for index, step in enumerate(plan):
            for earlier in {last[r] for r in step.touches if r in last}:
                after[earlier].append(index)
                waiting[index] += 1
            for resource in step.touches:
                last[resource] = index
        free: list[int] = []  # ready steps that take no pool card, by their old place
        pool: list[int] = []  # ready steps that do
        for index in range(count):
            if not waiting[index]:
                (pool if plan[index].card is not None else free).append(index)
        heapq.heapify(free)
        mask = (1 << len(self.pool)) - 1
        cursor = self.cursor
        order: list[Step] = []
        while free or pool:
            if free:
                index = heapq.heappop(free)
            else:
                best: tuple[int, int, int, int] | None = None
                for candidate in pool:
                    card = plan[candidate].card
                    assert card is not None
                    taken = self._take_card(mask, cursor, card)
                    if taken is not None and (best is None or (taken[0], candidate) < best[:2]):
                        best = (taken[0], candidate, taken[1], taken[2])
                if best is None:
                    raise LookupError("a planned pool card is not in the pool")
                _, index, cursor, mask = best
                pool.remove(index)
            order.append(plan[index])
            for later in after[index]:
                waiting[later] -= 1
                if not waiting[later]:
                    if plan[later].card is None:
                        heapq.heappush(free, later)
                    else:
                        pool.append(later)
        return order

    def length_if_moved(
        self,
        plan: list[Step],
        states: list[tuple[int, int, int]],
        i: int,
        j: int,
        limit: int,
        size: int = 1,
    ) -> tuple[int, list[Step], int] | None:
        """The log length with steps ``i`` to ``i + size - 1`` moved, if below ``limit``.

        They move before step ``j`` when ``j < i``, else after step ``j``.

        Only the changed stretch is written out: once the pool is back in the
        state the current plan has before some step ``k``, the rest costs what
        it costs now. Returns the length, the steps from ``min(i, j)`` up to
        ``k`` and ``k``.
        """
        block = plan[i : i + size]
        if j < i:
            start, moved, resume = j, [*block, *plan[j:i]], i + size
        else:
            start, moved, resume = i, [*plan[i + size : j + 1], *block], j + 1
        mask, cursor, length = states[start]
        steps: list[Step] = []
        for n, step in enumerate(itertools.chain(moved, itertools.islice(plan, resume, None))):
            if n >= len(moved):
                # Past the moved stretch: where the pool is as the current plan
                # has it before step k, the rest costs what it costs now.
                k = resume + n - len(moved)
                if states[k][0] == mask and states[k][1] == cursor:
                    total = length + states[-1][2] - states[k][2]
                    return (total, steps, k) if total < limit else None
            steps.append(step)
            taken = self._before(mask, cursor, step)
            if taken is None:
                return None
            taps, cursor, mask = taken
            length += taps + 1
            if length >= limit:
                return None
        return length, steps, len(plan)

    def snapshots(self, plan: list[Step]) -> list[Game]:
        """The game before each step of ``plan`` (and after the last)."""
        play = self.game.copy()
        games = [play.copy()]
        tokens = self.write(plan)
        at = 0
        for step in plan:
            while tokens[at] == "S" and step.token != "S":
                play.play("S")
                at += 1
            play.play(tokens[at])
            at += 1
            games.append(play.copy())
        return games

    def plays_through(
        self,
        snapshots: list[Game],
        states: list[tuple[int, int, int]],
        start: int,
        steps: list[Step],
        k: int,
    ) -> bool:
        """Whether ``steps`` from the game before step ``start`` are legal and lead to
        the same table as the current plan before step ``k`` (or to a win at the end)."""
        mask, cursor, _ = states[start]
        tokens: list[str] = []
        for step in steps:
            taken = self._before(mask, cursor, step)
            if taken is None:
                return False
            taps, cursor, mask = taken
            tokens.extend(["S"] * taps)
            tokens.append(step.token)
        play = snapshots[start].copy()
        try:
            play.play_log(" ".join(tokens))  # text is read faster than a list
        except ValueError:
            return False
        if k == len(snapshots) - 1:
            return play.is_won
        return _table(play) == _table(snapshots[k])

    def _move_block(
        self,
        plan: list[Step],
        states: list[tuple[int, int, int]],
        snapshots: list[Game],
        i: int,
        size: int,
        best: int,
        quick: bool,
    ) -> tuple[list[Step], int] | None:
        """The plan with steps ``i`` .. ``i + size - 1`` moved so that the log is shorter."""
        card = plan[i].card
        if i + size > len(plan) or (quick and card is None):
            return None
        copies = sum(1 << index for index in self.where.get(card, ())) if card is not None else 0
        taps_now = states[i + 1][2] - states[i][2] - 1
        for j in (*range(i - 1, max(-1, i - WINDOW), -1), *range(i + size, i + WINDOW)):
            if j >= len(plan):
                break
            if quick and card is not None:
                # A quick filter: the card must come cheaper at its new place.
                mask, cursor, _ = states[j + 1 if j > i else j]
                here = self._take_card(mask | copies, cursor, card)
                if here is None or here[0] >= taps_now:
                    continue
            if self.tries >= self.max_tries:
                return None
            self.tries += 1
            found = self.length_if_moved(plan, states, i, j, best, size)
            if found is None:
                continue
            length, steps, k = found
            if self.plays_through(snapshots, states, min(i, j), steps, k):
                block = plan[i : i + size]
                rest = [*plan[:i], *plan[i + size :]]
                at = j if j < i else j - size + 1
                return [*rest[:at], *block, *rest[at:]], length
        return None

    def wins(self, tokens: list[str]) -> bool:
        """Whether the engine accepts ``tokens`` from the game and ends won."""
        play = self.game.copy()
        try:
            play.play_log(" ".join(tokens))
        except ValueError:
            return False
        return play.is_won

    def polish(
        self,
        log: tuple[str, ...],
        cap: Cap,
        *,
        thorough: bool = True,
        tries: int = 20_000,
    ) -> tuple[str, ...]:
        """A log at most as long as ``log`` that still wins.

        First the moves are scheduled (`schedule`, always: it takes
        milliseconds), then moved one by one. That work is counted in orders
        tried (at most ``tries``), so that the answer does not depend on the
        machine's speed; the ``cap`` only stops it when time is up. Without
        ``thorough``, only the quick first stage runs.
        """
        self.tries = 0
        self.max_tries = tries
        plan = plan_of(self.game, log)
        scheduled = self.schedule(plan)
        tokens = self.write(scheduled)
        if len(tokens) < len(log) and self.wins(tokens):
            plan = scheduled
        states = self.states(plan)
        if states is None:
            return log
        snapshots = self.snapshots(plan)
        best = len(log)
        improved = True
        quick = True  # first only moves that make the moved card itself cheaper
        while (improved or (quick and thorough)) and not cap.over() and self.tries < self.max_tries:
            if not improved:
                quick = False
            improved = False
            # The costliest plays from the waste first.
            costs = [states[k + 1][2] - states[k][2] for k in range(len(plan))]
            # The costliest plays from the waste first; later also the other
            # moves, which may stand in the way of a play moving.
            order = sorted(
                (i for i, step in enumerate(plan) if step.card is not None or not quick),
                key=lambda i: -costs[i],
            )
            for i in order:
                if cap.over():
                    break
                if i >= len(plan) or (quick and plan[i].card is None):
                    continue  # earlier changes in this pass shifted the steps
                for size in (1,) if quick else (1, 2):
                    moved = self._move_block(plan, states, snapshots, i, size, best, quick)
                    if moved is not None:
                        plan, best = moved
                        new_states = self.states(plan)
                        assert new_states is not None
                        states, improved = new_states, True
                        snapshots = self.snapshots(plan)
                        break
        tokens = self.write(plan)
        return tuple(tokens) if len(tokens) < len(log) and self.wins(tokens) else log


def _table(game: Game) -> tuple[object, ...]:
    """A game's table with the two copies of a card not told apart."""
    table = game.position()

    def piles(parts: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(card % 52 for card in part) for part in parts)

    return (
        piles(table.down),
        piles(table.up),
        piles((table.stock, table.waste)),
        piles(table.foundations),
    )
