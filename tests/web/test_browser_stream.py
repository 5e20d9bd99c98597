"""The ranked attempt streamed over its socket, in a real browser, through a network cut.

The page sends each action as it is played and the server stores it with its
own time before acknowledging it. Then the network goes (the browser offline,
the socket cut and refused while it lasts): the page plays on, queues its
actions and says so; once the network is back, the socket connects again and
sends the queue. The stored game is the played one, nothing lost or doubled.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from games.models import Attempt
from tests.fixtures import WIN_LOG
from tests.web.conftest import shot
from tests.web.test_browser import engine, play_keys, start_ranked

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

ATTEMPT_SOCKET = re.compile(r"/ws/daily/[^/]+/attempt/$")
ONLINE = 8  # actions streamed before the cut
OFFLINE = 12  # actions played while the network is away


class Network:
    """Stands between the page and the server's attempt socket, and can cut it."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.up = True
        self.routes: list[Any] = []
        self.connections = 0
        page.route_web_socket(ATTEMPT_SOCKET, self.route)

    def route(self, socket: Any) -> None:
        if not self.up:
            socket.close(code=1013, reason="offline")
            return
        self.connections += 1
        self.routes.append((socket, socket.connect_to_server()))

    def cut(self) -> None:
        self.up = False
        self.page.context.set_offline(True)
        for page_side, server_side in self.routes:
            server_side.close()
            page_side.close(code=1013, reason="offline")
        self.routes.clear()

    def restore(self) -> None:
        self.up = True
        self.page.context.set_offline(False)


def stored_log(username: str) -> list[str]:
    return Attempt.objects.get(player__username=username).log.split()


def wait_stored(page: Any, actions: int) -> None:
    """Until the server has acknowledged (so stored) `actions` actions."""
    page.wait_for_selector(f'#attempt[data-stored="{actions}"]', state="attached")


def play_one_by_one(page: Any, tokens: list[str], *, acknowledged: bool) -> None:
    for token in tokens:
        played = engine(page, "game.log.length")
        play_keys(page, token)
        page.wait_for_function(f"() => window.easyHarp.game.log.length === {played + 1}")
        if acknowledged:
            wait_stored(page, played + 1)


def test_a_ranked_attempt_streams_each_action_and_a_network_cut_loses_and_doubles_nothing(
    site: Any, make_player: Any
) -> None:
    alice = make_player("alice")
    page = site("/play/", player=alice, service_workers="block")
    network = Network(page)
    page.wait_for_selector('#attempt[data-mode="none"]', state="attached")
    start_ranked(page)

    # Each action goes as it is played, and is stored before it is acknowledged.
    play_one_by_one(page, WIN_LOG[:ONLINE], acknowledged=True)
    page.wait_for_selector('#attempt[data-stream="live"]', state="attached")
    assert stored_log("alice") == WIN_LOG[:ONLINE]
    attempt = Attempt.objects.get()
    assert len(attempt.times) == ONLINE and attempt.times == sorted(attempt.times)
    assert network.connections == 1

    # The network goes: the page plays on, keeps the actions and says so.
    network.cut()
    page.wait_for_selector('#attempt[data-stream="offline"]', state="attached")
    play_one_by_one(page, WIN_LOG[ONLINE : ONLINE + OFFLINE], acknowledged=False)
    page.wait_for_selector("#attempt-waiting:not([hidden])")
    assert "Connection lost" in page.inner_text("#attempt-waiting")
    shot(page, "play-stream-offline")
    assert stored_log("alice") == WIN_LOG[:ONLINE]
    assert page.get_attribute("#attempt", "data-mode") == "open"

    # Back: the socket connects again and sends the queue, once.
    network.restore()
    wait_stored(page, ONLINE + OFFLINE)
    page.wait_for_selector('#attempt[data-stream="live"]', state="attached")
    page.wait_for_selector("#attempt-waiting", state="hidden")
    played = engine(page, "game.log")
    assert played == WIN_LOG[: ONLINE + OFFLINE]
    assert stored_log("alice") == played
    attempt = Attempt.objects.get()
    assert len(attempt.times) == len(played) and attempt.times == sorted(attempt.times)
    # The queued actions were received after the cut, by the server's clock.
    assert attempt.times[ONLINE] >= attempt.times[ONLINE - 1]
    assert network.connections >= 2
    assert page.errors == []


@pytest.mark.parametrize("language", ["es", "nl"])
def test_the_waiting_notice_speaks_the_players_language_on_a_phone(
    site: Any, make_player: Any, language: str
) -> None:
    player = make_player(f"phone-{language}")
    page = site("/play/", player=player, service_workers="block", language=language, width=320)
    network = Network(page)
    page.wait_for_selector('#attempt[data-mode="none"]', state="attached")
    start_ranked(page)
    play_one_by_one(page, WIN_LOG[:1], acknowledged=True)

    network.cut()
    page.wait_for_selector('#attempt[data-stream="offline"]', state="attached")
    play_one_by_one(page, WIN_LOG[1:3], acknowledged=False)
    page.wait_for_selector("#attempt-waiting:not([hidden])")

    words = {"es": "Se perdió la conexión", "nl": "Verbinding verbroken"}[language]
    assert words in page.inner_text("#attempt-waiting")
    # Nothing wider than the phone.
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 320
    shot(page, f"play-stream-offline-320-{language}")
    network.restore()
    wait_stored(page, 3)
