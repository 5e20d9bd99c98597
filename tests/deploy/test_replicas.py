"""Two web replicas sharing PostgreSQL and Redis, as behind the edge: whichever
process answers, a player sees the same site.

A board's socket on one process sees a game submitted through the other; a
watcher on one follows, in the progress view, an attempt streamed on the
other, once the no-spoiler lock lets them (their own game stored through the
other process); the players of a race on either process see each other's
progress; a session and its CSRF token from one process serve on the
other; and the limits count over both: the watchers per attempt, the
sign-ups of an address and the hints of a player.
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
from django.contrib.auth import get_user_model
from django.utils import timezone

from games.models import Attempt, DailyDeal
from games.services import attempt_start
from races.models import Racer
from tests.deploy.test_proxy import Edge, client, insecure_tls
from tests.fixtures import (
    DEAL,
    DEAL_NUMBER,
    PASSWORD,
    WIN_LOG,
    at_human_pace,
    play_ranked,
)
from tests.races.racing import race_for, running
from tests.replicas import PASSING, Player, open_socket, play_on, replica, send_actions

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


async def progress_of(socket: Any, username: str, moves: int) -> dict[str, Any]:
    """Read a race socket until its race shows `username` at `moves` moves: that entry."""
    while True:
        message = json.loads(await asyncio.wait_for(socket.recv(), timeout=60))
        assert message["type"] in PASSING | {"welcome"}, message
        if message["type"] in ("welcome", "race"):
            players = {entry["player"]: entry for entry in message["race"]["players"]}
            if players[username]["moves"] == moves:
                return dict(players[username])


def test_the_players_of_a_race_on_either_process_see_each_others_progress(
    transactional_db: None,
) -> None:
    alice, bob = Player("alice"), Player("bob")
    race = running(race_for(alice.user, bob.user))
    path = f"/ws/races/{race.code}/"

    def stored_moves(player: Player) -> int:
        return Racer.objects.get(race=race, player=player.user).moves

    with ExitStack() as replicas:
        first, second = (replicas.enter_context(replica()) for _ in "ab")

        async def race_on_both() -> tuple[dict[str, Any], dict[str, Any]]:
            at_first = await open_socket(first.address, alice.cookie, path)
            at_second = await open_socket(second.address, bob.cookie, path)
            for socket in (at_first, at_second):
                welcome = json.loads(await asyncio.wait_for(socket.recv(), timeout=60))
                assert (welcome["type"], welcome["race"]["status"]) == ("welcome", "running")
            await play_on(at_first, 1, 12)
            alices = await progress_of(
                at_second, "alice", await asyncio.to_thread(stored_moves, alice)
            )
            await play_on(at_second, 1, 6)
            bobs = await progress_of(at_first, "bob", await asyncio.to_thread(stored_moves, bob))
            await at_first.close()
            await at_second.close()
            return alices, bobs

        alices, bobs = asyncio.run(race_on_both())
    assert alices["moves"] > 0 and bobs["moves"] > 0
    assert not alices["left"] and not bobs["left"]


def test_the_limits_of_sign_ups_and_hints_count_the_requests_of_every_process(day: str) -> None:
    bob = Player("bob")
    play_ranked(bob.user, WIN_LOG)  # he has played the day: its hints are his to ask
    limits = {"THROTTLE_SIGNUP": "2/day", "THROTTLE_HINT": "1/day"}
    with ExitStack() as replicas:
        first, second = (replicas.enter_context(replica(**limits)) for _ in "ab")

        def sign_up(address: str, username: str) -> int:
            answer = httpx.post(
                f"http://{address}/api/auth/register/",
                json={"username": username, "password": PASSWORD},
                timeout=60,
            )
            return answer.status_code

        def hint(address: str) -> httpx.Response:
            return httpx.post(
                f"http://{address}/api/hint/",
                json={"deal": DEAL, "log": " ".join(WIN_LOG[:-2])},
                headers={"Authorization": f"Token {bob.token}"},
                timeout=120,
            )

        sign_ups = [
            sign_up(first.address, "carol"),
            sign_up(second.address, "dave"),
            sign_up(first.address, "erin"),
            sign_up(second.address, "frank"),
        ]
        hints = [hint(first.address), hint(second.address)]
    assert sign_ups == [201, 201, 429, 429]
    assert hints[0].status_code == 200, hints[0].text
    assert hints[0].json()["result"] == "move"
    assert hints[0].json()["action"] is not None
    assert hints[1].status_code == 429, hints[1].text
    assert not get_user_model().objects.filter(username__in=["erin", "frank"]).exists()


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
