"""The page's side of a socket that takes numbered actions (a ranked attempt's, a
race's), for the property tests that any interleaving of actions, resends and
reconnects stores the game played, in order, once.

The page here behaves as the play and race pages do: it numbers each action by
its place in the log, sends it when played, and after each (re)connect sends
again every action past the count in the socket's first message. Hypothesis
chooses (`steps`) when it plays, resends an old action, or drops the socket
(without waiting for the answers on their way).
"""

from __future__ import annotations

import random
from typing import Any

from channels.testing import WebsocketCommunicator
from hypothesis import strategies as st

from easyharp_site.asgi import application
from games.rules import Game

# What the page does next: play the next action, drop (or, dropped, reconnect) the
# socket, or send action n again.
steps = st.lists(
    st.one_of(
        st.just(("play", 0)),
        st.just(("drop", 0)),
        st.tuples(st.just("again"), st.integers(min_value=1, max_value=40)),
    ),
    max_size=60,
)


def legal_game(deal: int | str, seed: int, length: int) -> list[str]:
    """Up to `length` random legal actions on `deal`, undos included."""
    rng = random.Random(seed)
    play = Game(deal)
    for _ in range(length):
        actions = list(play.legal_actions())
        if not actions:
            break
        play.play(rng.choice(actions))
    return play.log


class StreamingPage:
    """The game played so far, and the socket at `path`, whose first message is of
    type `first` and holds the stored `log` and its count, `actions`; messages of
    the types in `passing` may come between the acknowledgements."""

    def __init__(
        self, cookie: tuple[bytes, bytes], path: str, *, first: str, passing: set[str]
    ) -> None:
        self.cookie = cookie
        self.path = path
        self.first = first
        self.passing = passing
        self.played: list[str] = []
        # How many of them the server has said it stored (a welcome's count, an ack).
        self.stored = 0
        self.socket: WebsocketCommunicator | None = None

    async def connect(self) -> None:
        headers = [(b"origin", b"http://testserver"), (b"host", b"testserver"), self.cookie]
        self.socket = WebsocketCommunicator(application, self.path, headers=headers)
        connected, _ = await self.socket.connect()
        assert connected
        opening = await self.socket.receive_json_from(timeout=5)
        assert opening["type"] == self.first, opening
        assert self.played[: opening["actions"]] == opening["log"].split()
        self.stored = opening["actions"]
        # The queue: every action the server has not stored.
        for number in range(opening["actions"] + 1, len(self.played) + 1):
            await self.send(number)

    async def send(self, number: int) -> None:
        assert self.socket is not None
        token = self.played[number - 1]
        await self.socket.send_json_to({"type": "action", "n": number, "action": token})

    async def drop(self) -> None:
        """The network goes: the socket is gone, whatever was on its way."""
        assert self.socket is not None
        await self.socket.disconnect()
        self.socket = None

    async def all_stored(self) -> None:
        """Wait until the server has said it stored the last action, by an
        acknowledgement or already in the opening message (refusing nothing on the way)."""
        assert self.socket is not None
        while self.stored < len(self.played):
            message: dict[str, Any] = await self.socket.receive_json_from(timeout=5)
            assert message["type"] in {"ack", *self.passing}, message
            if message["type"] == "ack":
                self.stored = max(self.stored, message["n"])

    async def play(self, game: list[str], plan: list[tuple[str, int]]) -> None:
        """Play `game` along `plan`, then send what is left and wait until all is stored."""
        await self.connect()
        for step, value in plan:
            if step == "play" and len(self.played) < len(game):
                self.played.append(game[len(self.played)])
                if self.socket is not None:
                    await self.send(len(self.played))
            elif step == "drop" and self.socket is not None:
                await self.drop()
            elif step == "drop":
                await self.connect()
            elif step == "again" and self.socket is not None and value <= len(self.played):
                await self.send(value)
        self.played.extend(game[len(self.played) :])
        if self.socket is None:
            await self.connect()
        else:
            for number in range(1, len(self.played) + 1):
                await self.send(number)
        await self.all_stored()
        assert self.socket is not None
        await self.socket.disconnect()
