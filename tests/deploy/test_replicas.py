"""Two web replicas sharing PostgreSQL and Redis, as behind the edge: whichever
process answers, a player sees the same site.

A board's socket on one process sees a game submitted through the other; a
watcher on one follows, in the progress view, an attempt streamed on the
other, once the no-spoiler lock lets them (their own game stored through the
other process); a session and its CSRF token from one process serve on the
other; and the limit of watchers per attempt counts the sockets of both.
Behind the edge (nginx, as deploy/nginx renders it), replicas restarted one at
a time lose nothing of a game streamed through it.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from django.utils import timezone

from games.models import Attempt, DailyDeal
from games.services import attempt_start
from tests.deploy.test_proxy import Edge, client, insecure_tls
from tests.fixtures import (
    DEAL,
    DEAL_NUMBER,
    PASSWORD,
    WIN_LOG,
    at_human_pace,
    play_ranked,
)
from tests.replicas import Player, open_socket, play_on, replica, send_actions

pytestmark = [pytest.mark.postgres, pytest.mark.redis]


@pytest.fixture
def day(transactional_db: None) -> str:
    """Today, its deal stored; its date."""
    date = timezone.now().date()
    DailyDeal.objects.create(date=date, number=DEAL_NUMBER)
    return date.isoformat()


def watch_path(date: str, username: str) -> str:
    return f"/ws/daily/{date}/players/{username}/attempt/"


async def closing(socket: Any) -> tuple[str, int]:
    """The code of the error a socket says, and its close code."""
    error = json.loads(await asyncio.wait_for(socket.recv(), timeout=60))
    assert error["type"] == "error", error
    with pytest.raises(websockets.ConnectionClosed) as closed:
        await asyncio.wait_for(socket.recv(), timeout=60)
    assert closed.value.rcvd is not None
    return error["error"]["code"], closed.value.rcvd.code


def submit_through(address: str, player: Player) -> None:
    """The player's ranked game of today (the win at a person's pace), through `address`."""
    headers = {"Authorization": f"Token {player.token}"}
    date = timezone.now().date().isoformat()
    started = httpx.post(f"http://{address}/api/daily/{date}/attempt/", headers=headers, timeout=60)
    assert started.status_code in (200, 201), started.text
    at_human_pace(started.json()["id"], WIN_LOG)
    answer = httpx.post(
        f"http://{address}/api/games/",
        json={"deal": DEAL, "log": " ".join(WIN_LOG)},
        headers=headers,
        timeout=60,
    )
    assert answer.status_code == 201, answer.text


def test_a_board_socket_on_one_process_sees_a_game_submitted_through_the_other(day: str) -> None:
    alice = Player("alice")
    with ExitStack() as replicas:
        first, second = (replicas.enter_context(replica()) for _ in "ab")

        async def watch_and_submit() -> dict[str, Any]:
            path = f"/ws/daily/{day}/leaderboard/?order=score"
            socket = await open_socket(first.address, alice.cookie, path)
            snapshot = json.loads(await asyncio.wait_for(socket.recv(), timeout=60))
            assert (snapshot["type"], snapshot["total"]) == ("snapshot", 0)
            await asyncio.to_thread(submit_through, second.address, alice)
            while True:
                message = json.loads(await asyncio.wait_for(socket.recv(), timeout=60))
                if message["type"] == "update":
                    await socket.close()
                    return dict(message)

        update = asyncio.run(watch_and_submit())
    assert update["total"] == 1
    assert update["entries"][0]["player"] == "alice"


def test_a_watcher_on_one_process_follows_an_attempt_streamed_on_the_other(day: str) -> None:
    alice, bob = Player("alice"), Player("bob")
    attempt_start(player=alice.user, date=timezone.now().date())
    with ExitStack() as replicas:
        first, second = (replicas.enter_context(replica()) for _ in "ab")

        async def watch() -> list[dict[str, Any]]:
            # Bob has not played today: the lock holds on either process.
            socket = await open_socket(first.address, bob.cookie, watch_path(day, "alice"))
            assert await closing(socket) == ("replay_locked", 4403)
            await asyncio.to_thread(submit_through, second.address, bob)

            watcher = await open_socket(first.address, bob.cookie, watch_path(day, "alice"))
            snapshot = json.loads(await asyncio.wait_for(watcher.recv(), timeout=60))
            assert (snapshot["type"], snapshot["view"], snapshot["log"]) == (
                "snapshot",
                "progress",
                None,
            )
            player = await open_socket(second.address, alice.cookie, f"/ws/daily/{day}/attempt/")
            state = json.loads(await asyncio.wait_for(player.recv(), timeout=60))
            assert state["type"] == "state"
            await send_actions(player, 1, 10)
            heard = []
            while not heard or heard[-1]["actions"] < 10:
                message = json.loads(await asyncio.wait_for(watcher.recv(), timeout=60))
                assert message["type"] in {"progress", "snapshot"}, message
                heard.append(message)
            await player.close()
            await watcher.close()
            return heard

        heard = asyncio.run(watch())
    progress = [message for message in heard if message["type"] == "progress"]
    assert progress, heard
    assert all("log" not in message and "actions" in message for message in progress)
    assert heard[-1]["actions"] == 10


def test_a_session_and_its_csrf_token_from_one_process_serve_on_the_other(day: str) -> None:
    with ExitStack() as replicas:
        first, second = (replicas.enter_context(replica()) for _ in "ab")
        with httpx.Client(base_url=f"http://{first.address}", timeout=60) as at_first:
            # Signed up by the server (whose password hasher the test's process does not use).
            signed_up = at_first.post(
                "/api/auth/register/", json={"username": "carol", "password": PASSWORD}
            )
            assert signed_up.status_code == 201, signed_up.text
            form = at_first.get("/accounts/login/")
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
            assert token is not None
            signed_in = at_first.post(
                "/accounts/login/",
                data={
                    "username": "carol",
                    "password": PASSWORD,
                    "csrfmiddlewaretoken": token.group(1),
                },
            )
            assert signed_in.status_code == 302, signed_in.text
            cookies = dict(at_first.cookies)
        with httpx.Client(
            base_url=f"http://{second.address}", timeout=60, cookies=cookies
        ) as at_second:
            path = f"/api/daily/{day}/attempt/"
            refused = at_second.post(path)
            started = at_second.post(path, headers={"X-CSRFToken": cookies["csrftoken"]})
    assert refused.status_code == 403, refused.text
    assert started.status_code == 201, started.text
    assert Attempt.objects.get(player__username="carol").daily.date.isoformat() == day


def test_the_limit_of_watchers_counts_the_sockets_of_every_process(day: str) -> None:
    alice, bob = Player("alice"), Player("bob")
    attempt_start(player=alice.user, date=timezone.now().date())
    play_ranked(bob.user, WIN_LOG)
    with ExitStack() as replicas:
        first, second = (replicas.enter_context(replica(LIVE_WATCHERS_MAX="1")) for _ in "ab")

        async def watch() -> tuple[str, int]:
            watching = await open_socket(first.address, bob.cookie, watch_path(day, "alice"))
            snapshot = json.loads(await asyncio.wait_for(watching.recv(), timeout=60))
            assert snapshot["type"] == "snapshot"
            one_more = await open_socket(second.address, bob.cookie, watch_path(day, "alice"))
            refused = await closing(one_more)
            await watching.close()
            return refused

        assert asyncio.run(watch()) == ("too_many_watchers", 4429)


@pytest.mark.nginx
def test_replicas_restarted_one_at_a_time_behind_the_edge_lose_nothing_of_a_streamed_game(
    day: str, tmp_path: Path
) -> None:
    alice = Player("alice")
    attempt_start(player=alice.user, date=timezone.now().date())
    (tmp_path / "static").mkdir()
    (tmp_path / "nginx").mkdir()
    with ExitStack() as stack:
        # Two old replicas and a new one; the old ones stop one after the other.
        replicas = [
            stack.enter_context(
                replica("--forwarded-allow-ips=127.0.0.1", SECURE_PROXY_SSL_HEADER="true")
            )
            for _ in "abc"
        ]
        upstreams = " ".join(running.address for running in replicas)
        edge = Edge(tmp_path / "nginx", upstreams, tmp_path / "static")
        stack.callback(edge.stop)
        address = f"127.0.0.1:{edge.https_port}"
        closes = asyncio.run(_stream_while_rolling(address, alice, replicas[:2]))
        with client() as http:
            answer = http.post(
                f"https://{address}/api/games/",
                json={"deal": DEAL, "log": " ".join(WIN_LOG)},
                headers={"Authorization": f"Token {alice.token}"},
            )
        assert answer.status_code == 201, answer.text
    # A fresh edge sends its first connection to the first upstream, an old replica:
    # the socket is told of a restart at least once, and of nothing else.
    assert closes and set(closes) == {1012}
    attempt = Attempt.objects.get(player=alice.user)
    assert attempt.ranked_game is not None
    assert attempt.ranked_game.log.split() == WIN_LOG


async def _stream_while_rolling(address: str, player: Player, stopping: list[Any]) -> list[int]:
    """Stream the win through the edge at `address`, stopping each of `stopping` in turn
    on the way (connecting again when the socket was on it); the close codes heard."""
    path = f"/ws/daily/{timezone.now().date().isoformat()}/attempt/"
    tls = insecure_tls()
    closes: list[int] = []
    socket, stored = None, 0
    for part, stop in zip((40, 80, len(WIN_LOG)), (*stopping, None), strict=True):
        if socket is None:
            socket = await open_socket(address, player.cookie, path, tls)
            state = json.loads(await asyncio.wait_for(socket.recv(), timeout=60))
            assert state["type"] == "state", state
            # Every acknowledged action is stored.
            assert state["log"].split() == WIN_LOG[:stored]
        await play_on(socket, stored + 1, part)
        stored = part
        if stop is None:
            break
        stop.process.send_signal(signal.SIGTERM)
        await asyncio.to_thread(stop.process.wait, 60)
        try:
            await socket.send(json.dumps({"type": "ping"}))
            reply = json.loads(await asyncio.wait_for(socket.recv(), timeout=60))
            while reply["type"] == "watchers":
                reply = json.loads(await asyncio.wait_for(socket.recv(), timeout=60))
            assert reply["type"] == "pong", reply
        except websockets.ConnectionClosed as closed:
            assert closed.rcvd is not None
            closes.append(closed.rcvd.code)
            socket = None
    assert socket is not None
    await socket.close()
    return closes
