"""One ranked attempt's game as a socket streams it, action by action (`games.consumers`).

The engine's table is kept in memory for the socket's life, rebuilt from the
stored log once when the socket connects (or when another device changed the
stored game), so that checking an action is one action's work, not a replay of
the whole log. Actions are numbered (1-based, their place in the log), which
makes a resent action harmless: the same action at a number already taken is
acknowledged again, another one there is refused.

No database and no socket here: the consumer passes in what the server stored
and when each action arrived, and sends what this decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from easyharp_site.errors import ServiceError
from games import rules
from games.parsing import illegal_action


@dataclass(frozen=True)
class Offer:
    """What became of one offered action: `accepted` (to store), `stored` (already
    stored: acknowledge it again), `waiting` (the same action is accepted and on its
    way to the database), or `refused` with the `error` to send."""

    outcome: str
    number: int
    error: ServiceError | None = None


def game_progress(game: rules.Game) -> dict[str, Any]:
    """What the progress view of a watched game shows of it: no table, no action."""
    return {
        "actions": len(game.log),
        "score": game.score,
        "moves": game.moves,
        "foundations": game.on_foundations,
        "won": game.is_won,
    }


class ActionStream:
    """The attempt's game here: the stored actions, then those accepted but not stored yet.

    `times` are the server's receive times (ms since the attempt started), one
    per action, never decreasing. `stored` actions of `tokens` are in the
    database at `version`; the rest wait for the next write.
    """

    def __init__(
        self,
        *,
        deal_number: int,
        log: list[str],
        times: list[int],
        version: int,
        max_actions: int,
    ) -> None:
        self.deal_number = deal_number
        self.max_actions = max_actions
        self._reset(log, times, version)

    def _reset(self, log: list[str], times: list[int], version: int) -> None:
        # One replay, of a log the server stored (and so checked) itself.
        self.game = rules.replay(rules.Deal(self.deal_number), log)
        self.tokens = list(self.game.log)
        self.times = _aligned(times, len(self.tokens))
        self.stored = len(self.tokens)
        self.version = version

    @property
    def unstored(self) -> int:
        """Actions accepted and not yet stored."""
        return len(self.tokens) - self.stored

    def offer(self, number: int, token: str, *, at_ms: int) -> Offer:
        """Check action `number` (`token` as sent), received `at_ms` after the start.

        The next action is played on the table; an action at a number already
        taken is the same one sent again (acknowledged, nothing changes) or a
        conflict; a number past the next leaves a gap and is refused.
        """
        try:
            canonical = rules.Action.parse(token).token
        except rules.ActionError:
            unreadable = rules.InvalidActionError(token.strip(), number)
            return Offer("refused", number, illegal_action(unreadable))
        taken = len(self.tokens)
        if number <= taken:
            if self.tokens[number - 1] != canonical:
                return Offer("refused", number, _conflict(number, canonical, self.tokens))
            return Offer("stored" if number <= self.stored else "waiting", number)
        if number > taken + 1:
            return Offer(
                "refused",
                number,
                ServiceError(
                    "out_of_order",
                    f"Action {number} cannot come before action {taken + 1}: send the "
                    f"actions in order, from {taken + 1}.",
                    next=taken + 1,
                ),
            )
        if number > self.max_actions:
            return Offer(
                "refused",
                number,
                ServiceError(
                    "log_too_long",
                    f"A log may hold at most {self.max_actions} actions.",
                    max_actions=self.max_actions,
                    actions=number,
                ),
            )
        try:
            self.game.play(canonical)
        except rules.ActionError as error:
            return Offer("refused", number, illegal_action(error))
        self.tokens.append(canonical)
        self.times.append(max(self.times[-1] if self.times else 0, at_ms))
        return Offer("accepted", number)

    def progress(self) -> dict[str, Any]:
        """`game_progress` of the game here, every accepted action played."""
        return game_progress(self.game)

    def to_store(self) -> tuple[list[str], list[int]]:
        """The whole game to write now (stored and waiting actions), with its times."""
        return list(self.tokens), list(self.times)

    def stored_up_to(self, count: int, version: int) -> None:
        """The database now holds the first `count` actions, at `version`."""
        self.stored = max(self.stored, count)
        self.version = version

    def rebase(self, log: list[str], times: list[int], version: int) -> list[Offer]:
        """Another write changed the stored game: go on from it, and offer the waiting
        actions again on top of it (each is stored already, accepted, or refused)."""
        waiting = list(
            zip(
                range(self.stored + 1, len(self.tokens) + 1),
                self.tokens[self.stored :],
                self.times[self.stored :],
                strict=True,
            )
        )
        self._reset(log, times, version)
        return [self.offer(number, token, at_ms=at) for number, token, at in waiting]


def _conflict(number: int, sent: str, tokens: list[str]) -> ServiceError:
    return ServiceError(
        "action_conflict",
        f"Action {number} is {tokens[number - 1]} in the stored game, not {sent}: "
        f"go on from the stored game.",
        index=number,
        token=sent,
        stored=tokens[number - 1],
        actions=len(tokens),
    )


def _aligned(times: list[int], length: int) -> list[int]:
    """`times` cut or stretched to `length` (a missing time is the last one known)."""
    aligned = [int(time) for time in times[:length]]
    last = aligned[-1] if aligned else 0
    return aligned + [last] * (length - len(aligned))
