"""Best-first search over macro moves.

Why macro moves: with draw-one and unlimited free passes every card of the
stock and the waste can be brought to the top of the waste, so for deciding
whether a position can be won the pool is just a set of playable cards. A
"pool move" plays one pool card straight to a column or a foundation; the stock
taps that bring it up are only written out in the log. The search still keeps
the concrete pool order and the tap cursor on each node so that it can count
those taps and prefer cheap ones, but the transposition key ignores them.

The transposition key also merges what cannot matter for winning: the two
copies of a card (cards are values 0..51), the twin foundations of a suit (the
pair of heights is sorted) and the order of the columns (sorted).

Two move generators:

- *complete*: every legal macro move, including taking cards back from the
  foundations. A search with it that runs out of positions has proven that no
  sequence of actions wins.
- *pruned*: plays cards to the foundations automatically when that can never
  hurt much, drops foundation take-backs and aimless moves between columns.
  Much faster for finding wins, proves nothing when it runs dry.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from random import Random

from games.solver.layout import CARDS, COLUMNS, Layout
from games.solver.work import Cap

HIDDEN = 64
KINGS = (12, 25, 38, 51)
RANK = tuple(v % 13 + 1 for v in range(52))
SUIT = tuple(v // 13 for v in range(52))
RED = tuple(v // 13 in (1, 2) for v in range(52))
# ONTO[t]: the two card values that may be put on a face-up t in a column.
ONTO: tuple[tuple[int, ...], ...] = tuple(
    () if RANK[t] == 1 else tuple(s * 13 + RANK[t] - 2 for s in range(4) if (s in (1, 2)) != RED[t])
    for t in range(52)
)


# ACCEPTS[c]: the two card values on which c may be put in a column.
ACCEPTS: tuple[tuple[int, ...], ...] = tuple(
    () if RANK[c] == 13 else tuple(s * 13 + RANK[c] for s in range(4) if (s in (1, 2)) != RED[c])
    for c in range(52)
)
DIG_DEPTH = 6  # pool cards in one dig, at most
BEAM_DIG_DEPTH = 4  # in a beam search: deeper digs cost many taps, rarely shorten a win


def _fits(card: int, onto: int) -> bool:
    return onto < HIDDEN and RANK[onto] == RANK[card] + 1 and RED[onto] != RED[card]


class Node:
    """One position reached by the search, with the path that led to it."""

    __slots__ = ("cols", "downs", "found", "mask", "counts", "cursor", "g", "parent", "tokens")

    def __init__(
        self,
        cols: tuple[tuple[int, ...], ...],
        downs: tuple[int, ...],
        found: tuple[int, ...],
        mask: int,
        counts: int,
        cursor: int,
        g: int,
        parent: Node | None,
        tokens: tuple[str, ...],
    ) -> None:
        self.cols = cols
        self.downs = downs
        self.found = found
        self.mask = mask
        self.counts = counts  # pool cards by value, two bits each: the key's view
        self.cursor = cursor
        self.g = g
        self.parent = parent
        self.tokens = tokens

    def child(
        self,
        cols: tuple[tuple[int, ...], ...],
        downs: tuple[int, ...],
        found: tuple[int, ...],
        token: str,
    ) -> Node:
        """The node after one move that leaves the pool (stock and waste) as it is."""
        return Node(
            cols, downs, found, self.mask, self.counts, self.cursor, self.g + 1, self, (token,)
        )

    def log(self) -> list[str]:
        """The actions from the root to this node."""
        parts: list[tuple[str, ...]] = []
        node: Node | None = self
        while node is not None:
            parts.append(node.tokens)
            node = node.parent
        return [token for part in reversed(parts) for token in part]


@dataclass(slots=True)
class Weights:
    """How one search attempt ranks positions (lower priority first)."""

    moves: float = 0.0  # weight of the moves already made (0: pure greedy)
    found: float = 1.0  # per card not yet on a foundation
    down: float = 6.0  # per face-down card
    cover: float = 1.5  # per face-up card lying on face-down cards
    empty: float = 3.0  # bonus per empty column
    pool: float = 0.0  # per card left in the pool
    loose: float = 0.0  # per card of an open column not headed by a king
    noise: float = 0.0  # random spread added to priorities: restarts differ
    seed: int = 0


@dataclass(slots=True)
class Outcome:
    """What one search attempt found."""

    won: Node | None
    exhausted: bool
    expanded: int


@dataclass(slots=True)
class Searcher:
    """Shared state of the search from one position: its pool and root node."""

    pool: tuple[int, ...]
    root: Node
    positions: dict[int, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def from_position(cls, position: Layout, moves: int = 0) -> Searcher:
        """Prepare a search from ``position`` (``moves``: the move count so far)."""
        cols = tuple(
            tuple(card + HIDDEN if i < down else card for i, card in enumerate(column))
            for column, down in zip(position.columns, position.down, strict=True)
        )
        positions: dict[int, list[int]] = {}
        for index, card in enumerate(position.pool):
            positions.setdefault(card, []).append(index)
        root = Node(
            cols=cols,
            downs=position.down,
            found=position.foundations,
            mask=(1 << len(position.pool)) - 1,
            counts=sum(1 << (2 * card) for card in position.pool),
            cursor=position.waste,
            g=moves,
            parent=None,
            tokens=(),
        )
        return cls(
            pool=position.pool,
            root=root,
            positions={card: tuple(where) for card, where in positions.items()},
        )

    # -- the search ---------------------------------------------------------

    def run(
        self,
        *,
        complete: bool,
        weights: Weights,
        max_nodes: int,
        cap: Cap,
        max_moves: int | None = None,
    ) -> Outcome:
        """One best-first search; stops at a win, exhaustion, ``max_nodes`` or the ``cap``.

        ``max_moves`` drops every path longer than that (used to look for a
        shorter win than one already found; such a search proves nothing).
        """
        root = self.root
        if not complete:
            root = self._autoplay(root)
        if sum(root.found) == CARDS:
            return Outcome(won=root, exhausted=False, expanded=0)
        seen: set[tuple[object, ...]] = {self._key(root)}
        heap: list[tuple[float, int, Node]] = [(0.0, 0, root)]
        counter = 0
        expanded = 0
        w_moves = weights.moves
        noise = weights.noise
        random = Random(weights.seed).random
        while heap:
            if expanded >= max_nodes:
                return Outcome(won=None, exhausted=False, expanded=expanded)
            if expanded & 127 == 0 and cap.over():
                return Outcome(won=None, exhausted=False, expanded=expanded)
            node = heapq.heappop(heap)[2]
            expanded += 1
            for child in self._children(node, complete):
                if max_moves is not None and child.g >= max_moves:
                    continue
                key = self._key(child)
                if key in seen:
                    continue
                seen.add(key)
                if sum(child.found) == CARDS:
                    return Outcome(won=child, exhausted=False, expanded=expanded)
                counter -= 1  # among equals, the newest first: dive
                priority = self._estimate(child, weights) + w_moves * child.g
                if noise:
                    priority += noise * random()
                heapq.heappush(heap, (priority, counter, child))
        exhausted = max_moves is None and complete
        return Outcome(won=None, exhausted=exhausted, expanded=expanded)

    def beam(
        self,
        *,
        width: int,
        weights: Weights,
        max_nodes: int,
        cap: Cap,
        max_moves: int | None = None,
    ) -> Outcome:
        """A beam search for a short win, the length counted in actions, stock taps included.

        Positions are expanded in order of the actions spent to reach them;
        of those reached with the same number, only the ``width`` most
        promising (``weights``, no noise) are expanded. A move that brings up
        a card deep in the stock, or one already passed, lands many actions
        later and competes there with the positions that spent those actions
        on moves. Stops once no position left can lead to a shorter win than
        the best found, or than ``max_moves`` (counted from the start of the
        game, as ``Node.g``). Deterministic: the same position and settings
        always give the same answer, unless the ``cap`` stops it first.
        """
        root = self._autoplay(self.root)
        if sum(root.found) == CARDS:
            return Outcome(won=root, exhausted=False, expanded=0)
        layers: dict[int, list[tuple[float, int, Node]]] = {root.g: [(0.0, 0, root)]}
        reached: dict[tuple[object, ...], int] = {}
        won: Node | None = None
        bound = max_moves if max_moves is not None else 1 << 30
        counter = 0
        expanded = 0
        g = root.g
        last = root.g
        while g <= last and g < bound:
            layer = layers.pop(g, None)
            g += 1
            if not layer:
                continue
            if len(layer) > width:
                layer = heapq.nsmallest(width, layer)
            for _, _, node in layer:
                if expanded >= max_nodes or (expanded & 31 == 0 and cap.over()):
                    return Outcome(won=won, exhausted=False, expanded=expanded)
                expanded += 1
                for child in self._children(node, False, BEAM_DIG_DEPTH):
                    if child.g >= bound:
                        continue
                    if sum(child.found) == CARDS:
                        won = child
                        bound = child.g
                        continue
                    key = (*self._key(child), child.mask, child.cursor)
                    if reached.get(key, child.g + 1) <= child.g:
                        continue
                    reached[key] = child.g
                    counter += 1
                    layers.setdefault(child.g, []).append(
                        (self._estimate(child, weights), counter, child)
                    )
                    last = max(last, child.g)
        return Outcome(won=won, exhausted=False, expanded=expanded)

    @staticmethod
    def _key(node: Node) -> tuple[object, ...]:
        f = node.found
        return (
            *sorted(node.cols),
            (min(f[0], f[1]), max(f[0], f[1])),
            (min(f[2], f[3]), max(f[2], f[3])),
            (min(f[4], f[5]), max(f[4], f[5])),
            (min(f[6], f[7]), max(f[6], f[7])),
            node.counts,
        )

    @staticmethod
    def _estimate(node: Node, weights: Weights) -> float:
        down = 0
        cover = 0
        empty = 0
        loose = 0
        for column, d in zip(node.cols, node.downs, strict=True):
            if d:
                down += d
                cover += len(column) - d
            elif not column:
                empty += 1
            elif RANK[column[0]] != 13:
                loose += len(column)
        return (
            weights.loose * loose
            + weights.found * (CARDS - sum(node.found))
            + weights.down * down
            + weights.cover * cover
            - weights.empty * empty
            + weights.pool * node.mask.bit_count()
        )

    # -- moves ----------------------------------------------------------------

    def _children(self, node: Node, complete: bool, depth: int = DIG_DEPTH) -> list[Node]:
        children: list[Node] = []
        cols = node.cols
        downs = node.downs
        found = node.found
        tops = [column[-1] if column else -1 for column in cols]
        # From the columns.
        for i in range(COLUMNS):
            top = tops[i]
            if top < 0:
                continue
            column = cols[i]
            d = downs[i]
            suit = SUIT[top]
            rank = RANK[top]
            slot = 2 * suit
            if found[slot] != rank - 1:
                slot += 1
            single = len(column) - d == 1
            if found[slot] == rank - 1:
                children.append(self._column_to_foundation(node, i, slot))
            if not complete and d == 0 and not single:
                # Moving the top card of a fully face-up column only
                # rearranges runs: rarely what a win needs.
                below = column[-2]
                if found[2 * SUIT[below]] != RANK[below] - 1 and (
                    found[2 * SUIT[below] + 1] != RANK[below] - 1
                ):
                    continue
            for j in range(COLUMNS):
                if j == i:
                    continue
                target = tops[j]
                if target < 0:
                    if d and RANK[column[d]] == 13:
                        children.append(self._run_to_empty(node, i, j))
                        if not complete:
                            break  # one empty column is as good as another
                elif _fits(top, target):
                    children.append(self._column_to_column(node, i, j))
        # From the pool.
        if node.mask:
            self._pool_children(node, tops, children, complete, depth)
        # Back from the foundations.
        if complete:
            for slot in range(8):
                height = found[slot]
                if not height:
                    continue
                card = (slot // 2) * 13 + height - 1
                for j in range(COLUMNS):
                    target = tops[j]
                    if (target < 0 and height == 13) or (target >= 0 and _fits(card, target)):
                        children.append(self._foundation_to_column(node, slot, j))
        if not complete:
            children = [self._autoplay(child) for child in children]
        return children

    def _pool_children(
        self, node: Node, tops: list[int], children: list[Node], complete: bool, depth: int
    ) -> None:
        found = node.found
        wanted: dict[int, None] = {}
        for suit in range(4):
            for height in (found[2 * suit], found[2 * suit + 1]):
                if height < 13:
                    wanted[suit * 13 + height] = None
        empty = False
        for top in tops:
            if top < 0:
                empty = True
            elif top < HIDDEN:
                for card in ONTO[top]:
                    wanted[card] = None
        if empty:
            for card in KINGS:
                wanted[card] = None
        mask = node.mask
        endgame = not any(node.downs)
        if not complete:
            self._digs(node, tops, children, depth)
            if not endgame:
                self._foundation_runs(node, tops, children)
        for card in wanted:
            best = nearest(self.positions.get(card, ()), mask, node.cursor)
            if best is None:
                continue
            taps, cursor, where = best
            rest = mask & ~(1 << where)
            slot = 2 * SUIT[card]
            if found[slot] != RANK[card] - 1:
                slot += 1
            if found[slot] == RANK[card] - 1 and (complete or endgame or _safe(found, card)):
                new_found = found[:slot] + (found[slot] + 1,) + found[slot + 1 :]
                children.append(
                    Node(
                        node.cols,
                        node.downs,
                        new_found,
                        rest,
                        node.counts - (1 << (2 * card)),
                        cursor,
                        node.g + taps + 1,
                        node,
                        ("S",) * taps + ("WF",),
                    )
                )
            if not complete:
                continue  # the pruned search puts pool cards on columns only in digs
            placed_on_empty = False
            for j in range(COLUMNS):
                target = tops[j]
                if target < 0:
                    if RANK[card] != 13 or placed_on_empty:
                        continue
                    placed_on_empty = True
                elif not _fits(card, target):
                    continue
                cols = node.cols
                new_cols = cols[:j] + (cols[j] + (card,),) + cols[j + 1 :]
                child = Node(
                    new_cols,
                    node.downs,
                    found,
                    rest,
                    node.counts - (1 << (2 * card)),
                    cursor,
                    node.g + taps + 1,
                    node,
                    ("S",) * taps + (f"W{j + 1}",),
                )
                children.append(child)

    def _digs(self, node: Node, tops: list[int], children: list[Node], depth: int) -> None:
        """Pool cards built on a column so that the top of a column hiding cards can follow.

        A chain is up to ``depth`` pool cards, each on the one before,
        the first on a column top (or a king on an empty column); then the
        top card of column ``i`` goes on the last one and uncovers a card.
        """
        counts = node.counts
        found = node.found
        for i in range(COLUMNS):
            top = tops[i]
            if top < 0 or not node.downs[i] or RANK[top] == 13:
                continue
            # Chains are built from the digging card down to the base: the
            # cards that accept the previous one and are still in the pool.
            frontier: list[tuple[int, ...]] = [(top,)]
            for _ in range(depth):
                grown: list[tuple[int, ...]] = []
                for chain in frontier:
                    for card in ACCEPTS[chain[-1]]:
                        if card in chain:
                            continue
                        if not counts >> (2 * card) & 3:
                            rank = RANK[card]
                            slot = 2 * SUIT[card]
                            if found[slot] != rank and found[slot + 1] != rank:
                                continue
                        longer = (*chain, card)
                        grown.append(longer)
                        for j in range(COLUMNS):
                            if j == i:
                                continue
                            base = tops[j]
                            if (base < 0 and RANK[card] == 13) or (base >= 0 and _fits(card, base)):
                                children.append(self._dig(node, longer, i, j))
                                if base < 0:
                                    break
                frontier = grown
                if not frontier:
                    break

    def _dig(self, node: Node, chain: tuple[int, ...], i: int, j: int) -> Node:
        cols = node.cols
        found = node.found
        mask = node.mask
        counts = node.counts
        cursor = node.cursor
        g = node.g
        column = cols[j]
        tokens: list[str] = []
        for card in reversed(chain[1:]):
            if not counts >> (2 * card) & 3:
                # Not in the pool: it is on top of a foundation, take it back.
                slot = 2 * SUIT[card]
                if found[slot] != RANK[card]:
                    slot += 1
                    if found[slot] != RANK[card]:
                        raise LookupError(f"card {card} is neither in the pool nor on top")
                tokens.append(f"F{slot + 1}{j + 1}")
                found = found[:slot] + (found[slot] - 1,) + found[slot + 1 :]
                g += 1
            else:
                taps, cursor, where = self._cheapest(mask, cursor, card)
                if taps:
                    tokens.extend(("S",) * taps)
                tokens.append(f"W{j + 1}")
                mask &= ~(1 << where)
                counts -= 1 << (2 * card)
                g += taps + 1
            column = (*column, card)
        top = cols[i][-1]
        new_cols, downs = self._uncover(cols, node.downs, i, cols[i][:-1])
        new_cols = new_cols[:j] + ((*column, top),) + new_cols[j + 1 :]
        tokens.append(f"{i + 1}{j + 1}")
        return Node(new_cols, downs, found, mask, counts, cursor, g + 1, node, tuple(tokens))

    def _foundation_runs(self, node: Node, tops: list[int], children: list[Node]) -> None:
        """Pool cards played to a foundation up to the top card of a column hiding cards.

        The pruned search plays a pool card to a foundation on its own only
        when that is safe; this is the other reason to do it: the run of pool
        cards lets a column top follow them and uncover a card.
        """
        for i in range(COLUMNS):
            top = tops[i]
            if top < 0:
                continue
            suit = SUIT[top]
            rank = RANK[top]
            for height in sorted({node.found[2 * suit], node.found[2 * suit + 1]}):
                if height >= rank - 1:
                    continue
                needed = range(suit * 13 + height, suit * 13 + rank - 1)
                if any(not (node.counts >> (2 * card) & 3) for card in needed):
                    continue
                found = node.found
                mask = node.mask
                counts = node.counts
                cursor = node.cursor
                g = node.g
                tokens: list[str] = []
                for card in needed:
                    taps, cursor, where = self._cheapest(mask, cursor, card)
                    slot = 2 * suit if found[2 * suit] == RANK[card] - 1 else 2 * suit + 1
                    if taps:
                        tokens.extend(("S",) * taps)
                    tokens.append("WF")
                    found = found[:slot] + (found[slot] + 1,) + found[slot + 1 :]
                    mask &= ~(1 << where)
                    counts -= 1 << (2 * card)
                    g += taps + 1
                slot = 2 * suit if found[2 * suit] == rank - 1 else 2 * suit + 1
                cols, downs = self._uncover(node.cols, node.downs, i, node.cols[i][:-1])
                found = found[:slot] + (found[slot] + 1,) + found[slot + 1 :]
                tokens.append(f"{i + 1}F")
                children.append(
                    Node(cols, downs, found, mask, counts, cursor, g + 1, node, tuple(tokens))
                )

    def _cheapest(self, mask: int, cursor: int, card: int) -> tuple[int, int, int]:
        """Taps, new cursor and pool index of the cheapest copy of ``card`` in the pool."""
        best = nearest(self.positions.get(card, ()), mask, cursor)
        if best is None:
            raise LookupError(f"card {card} is not in the pool")
        return best

    @staticmethod
    def _uncover(
        cols: tuple[tuple[int, ...], ...], downs: tuple[int, ...], i: int, rest: tuple[int, ...]
    ) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
        """Columns and face-down counts after column ``i`` became ``rest``."""
        if rest and rest[-1] >= HIDDEN:
            rest = rest[:-1] + (rest[-1] - HIDDEN,)
            downs = downs[:i] + (downs[i] - 1,) + downs[i + 1 :]
        return cols[:i] + (rest,) + cols[i + 1 :], downs

    def _column_to_foundation(self, node: Node, i: int, slot: int) -> Node:
        found = node.found
        cols, downs = self._uncover(node.cols, node.downs, i, node.cols[i][:-1])
        return node.child(
            cols,
            downs,
            found[:slot] + (found[slot] + 1,) + found[slot + 1 :],
            f"{i + 1}F",
        )

    def _column_to_column(self, node: Node, i: int, j: int) -> Node:
        card = node.cols[i][-1]
        cols, downs = self._uncover(node.cols, node.downs, i, node.cols[i][:-1])
        cols = cols[:j] + (cols[j] + (card,),) + cols[j + 1 :]
        return node.child(
            cols,
            downs,
            node.found,
            f"{i + 1}{j + 1}",
        )

    def _run_to_empty(self, node: Node, i: int, j: int) -> Node:
        d = node.downs[i]
        column = node.cols[i]
        cols, downs = self._uncover(node.cols, node.downs, i, column[:d])
        cols = cols[:j] + (column[d:],) + cols[j + 1 :]
        return node.child(
            cols,
            downs,
            node.found,
            f"{i + 1}{j + 1}",
        )

    def _foundation_to_column(self, node: Node, slot: int, j: int) -> Node:
        found = node.found
        card = (slot // 2) * 13 + found[slot] - 1
        cols = node.cols
        return node.child(
            cols[:j] + (cols[j] + (card,),) + cols[j + 1 :],
            node.downs,
            found[:slot] + (found[slot] - 1,) + found[slot + 1 :],
            f"F{slot + 1}{j + 1}",
        )

    def _autoplay(self, node: Node) -> Node:
        """Play column tops to the foundations while that is safe.

        Safe here means no card that could ever want to lie on it is still
        off the foundations (both copies of both opposite-colour suits are
        built past its rank), or it is an ace or a two.
        """
        moved = True
        while moved:
            moved = False
            found = node.found
            for i in range(COLUMNS):
                column = node.cols[i]
                if not column:
                    continue
                top = column[-1]
                rank = RANK[top]
                slot = 2 * SUIT[top]
                if found[slot] != rank - 1:
                    slot += 1
                    if found[slot] != rank - 1:
                        continue
                if not _safe(found, top):
                    continue
                child = self._column_to_foundation(node, i, slot)
                # Keep one node per macro move: fold the automatic plays into it.
                child.parent = node.parent
                child.tokens = node.tokens + child.tokens
                node = child
                moved = True
                break
        return node


def _safe(found: tuple[int, ...], card: int) -> bool:
    """Whether no card that could be put on ``card`` in a column is still off the foundations."""
    rank = RANK[card]
    if rank <= 2:
        return True
    if RED[card]:
        return min(found[0], found[1], found[6], found[7]) >= rank - 1
    return min(found[2], found[3], found[4], found[5]) >= rank - 1


def nearest(copies: tuple[int, ...], mask: int, cursor: int) -> tuple[int, int, int] | None:
    """Taps, new cursor and pool index of the copy (pool indexes ``copies``) that
    the fewest taps bring to the top of the waste; None when none is left."""
    best: tuple[int, int, int] | None = None
    for where in copies:
        if mask >> where & 1:
            taps, after = _take(mask, cursor, where)
            if best is None or taps < best[0]:
                best = (taps, after, where)
    return best


def _take(mask: int, cursor: int, where: int) -> tuple[int, int]:
    """Stock taps to bring pool card ``where`` to the top of the waste, and the new cursor.

    ``mask`` has a bit for every pool card still there; the cards before
    ``cursor`` are in the waste (the highest one on top), the others in the
    stock.
    """
    below = mask & ((1 << cursor) - 1)
    if below and below.bit_length() - 1 == where:
        return 0, cursor
    if where >= cursor:
        return (mask & ((1 << (where + 1)) - (1 << cursor))).bit_count(), where + 1
    stock = (mask >> cursor).bit_count()
    return stock + 1 + (mask & ((1 << (where + 1)) - 1)).bit_count(), where + 1
