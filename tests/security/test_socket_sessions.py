"""A socket's session ends with the session: its open sockets close within a second (4401),
and its cookie opens no signed-in socket afterwards.

Through the whole ASGI stack, on the in-memory channel layer and on Redis.
The player watches a private league's board, the day's board (with their own
entry) and their friends board; then their sessions end by each door:
signing out everywhere, a new password (by the API, a reset link, the admin's
password form, `manage.py changepassword`, or code), a ban, a deactivation in
code, a deletion; each revokes the player's API token too. Signing out of one
browser closes that browser's sockets only. A new API token ends no session:
sockets sign in by session cookie only, so they stay.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.tokens import default_token_generator
from django.core.management import call_command
from django.test import Client
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from rest_framework.authtoken.models import Token

from easyharp_site.accounts.live import player_sessions_ended
from easyharp_site.asgi import application
from games.models import DailyDeal
from leaderboards.consumers import CLOSE_NO_BOARD, CLOSE_NOT_SIGNED_IN
from leagues import services as leagues
from ranking.actions import player_ban
from tests.fixtures import client_for
from tests.leaderboards.test_consumers import (  # noqa: F401 - fixtures of the live tests
    _close_database_thread_connections,
    flushed,
    layers,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("flushed")]

PASSWORD = "a-long-passphrase"
NEW_PASSWORD = "another long passphrase"
# How long an ended session's socket may stay open.
WITHIN = 1.0


def _logout_everywhere(player: AbstractBaseUser) -> None:
    assert client_for(player).post("/api/auth/logout/everywhere/").status_code == 204


def _password_change(player: AbstractBaseUser) -> None:
    response = client_for(player).post(
        "/api/auth/password/change/",
        {"current_password": PASSWORD, "new_password": NEW_PASSWORD},
        format="json",
    )
    assert response.status_code == 200


def _password_reset(player: AbstractBaseUser) -> None:
    response = client_for(None).post(
        "/api/auth/password/reset/confirm/",
        {
            "uid": urlsafe_base64_encode(force_bytes(player.pk)),
            "token": default_token_generator.make_token(player),
            "password": NEW_PASSWORD,
        },
        format="json",
    )
    assert response.status_code == 200


def _admin_password_form(player: AbstractBaseUser) -> None:
    admin = get_user_model().objects.create_superuser(username="root", password=PASSWORD)
    browser = Client()
    browser.force_login(admin)
    response = browser.post(
        f"/admin/auth/user/{player.pk}/password/",
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"},
    )
    assert response.status_code == 302, response.content


def _changepassword_command(player: AbstractBaseUser, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("getpass.getpass", lambda *_, **__: NEW_PASSWORD)
    call_command("changepassword", player.get_username(), stdout=io.StringIO())


def _set_password_in_code(player: AbstractBaseUser) -> None:
    player.set_password(NEW_PASSWORD)
    player.save()


def _deactivate_in_code(player: AbstractBaseUser) -> None:
    player.is_active = False
    player.save()


def _ban(player: AbstractBaseUser) -> None:
    assert player_ban(player=player, moderator=None, reason="cheating")  # type: ignore[arg-type]


def _delete(player: AbstractBaseUser) -> None:
    response = client_for(player).post("/api/auth/delete/", {"password": PASSWORD}, format="json")
    assert response.status_code == 204


def _token_rotate(player: AbstractBaseUser) -> None:
    assert client_for(player).post("/api/auth/token/rotate/").status_code == 200


ENDINGS: dict[str, Callable[..., None]] = {
    "logout-everywhere": _logout_everywhere,
    "password-change": _password_change,
    "password-reset": _password_reset,
    "admin-password-form": _admin_password_form,
    "changepassword-command": _changepassword_command,
    "set-password-in-code": _set_password_in_code,
    "deactivation-in-code": _deactivate_in_code,
    "ban": _ban,
    "deletion": _delete,
}


def _end(ending: str, player: AbstractBaseUser, monkeypatch: pytest.MonkeyPatch) -> None:
    if ending == "changepassword-command":
        _changepassword_command(player, monkeypatch)
    else:
        ENDINGS[ending](player)


@database_sync_to_async
def signed_in_player() -> tuple[AbstractBaseUser, bytes, str]:
    """A player in a private league, with a browser session (cookie header) and a league slug."""
    players = get_user_model().objects
    player = players.create_user(username="hannah", password=PASSWORD)
    friend = players.create_user(username="frank")
    league = leagues.league_create(owner=friend, name="Private")  # type: ignore[arg-type]
    leagues.league_join(player=player, code=league.invite_code)  # type: ignore[arg-type]
    browser = Client()
    browser.force_login(player)
    return player, f"sessionid={browser.cookies['sessionid'].value}".encode(), league.slug


def paths(daily: DailyDeal, slug: str) -> dict[str, str]:
    day = daily.date.isoformat()
    return {
        "league": f"/ws/leagues/{slug}/daily/{day}/leaderboard/?order=score",
        "friends": f"/ws/daily/{day}/leaderboard/?order=score&scope=friends",
        "day": f"/ws/daily/{day}/leaderboard/?order=score",
    }


def socket(path: str, cookie: bytes, *extra: tuple[bytes, bytes]) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver"), (b"cookie", cookie)]
    return WebsocketCommunicator(application, path, headers=[*headers, *extra])


async def opened(path: str, cookie: bytes) -> tuple[WebsocketCommunicator, dict[str, Any]]:
    communicator = socket(path, cookie)
    connected, _ = await communicator.connect(timeout=5)
    assert connected
    snapshot = await communicator.receive_json_from(timeout=5)
    assert snapshot["type"] == "snapshot", snapshot
    return communicator, snapshot


async def refusal(path: str, cookie: bytes) -> int:
    """The close code a new socket gets (after its error message)."""
    communicator = socket(path, cookie)
    await communicator.connect(timeout=5)
    error = await communicator.receive_json_from(timeout=5)
    assert error["type"] == "error", error
    closed = await communicator.receive_output(timeout=5)
    await communicator.disconnect()
    return int(closed["code"])


@pytest.mark.parametrize("ending", list(ENDINGS))
async def test_an_ended_session_closes_its_open_sockets_and_opens_no_signed_in_one(
    daily: DailyDeal, ending: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    player, cookie, slug = await signed_in_player()
    ways = paths(daily, slug)
    sockets = [(await opened(path, cookie))[0] for path in ways.values()]
    try:
        await database_sync_to_async(_end)(ending, player, monkeypatch)

        for communicator in sockets:
            error = await communicator.receive_json_from(timeout=WITHIN)
            assert error["error"]["code"] == "session_ended"
            closed = await communicator.receive_output(timeout=WITHIN)
            assert closed == {"type": "websocket.close", "code": CLOSE_NOT_SIGNED_IN}
    finally:
        for communicator in sockets:
            await communicator.disconnect()

    assert await refusal(ways["league"], cookie) == CLOSE_NO_BOARD
    assert await refusal(ways["friends"], cookie) == CLOSE_NOT_SIGNED_IN
    communicator, snapshot = await opened(ways["day"], cookie)
    await communicator.disconnect()
    assert "me" not in snapshot, "the day's board sees an anonymous viewer"


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_an_ended_access_revokes_the_api_token(
    daily: DailyDeal, ending: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    player = get_user_model().objects.create_user(username="hannah", password=PASSWORD)
    old = client_for(player)
    assert old.get("/api/auth/me/").status_code == 200

    _end(ending, player, monkeypatch)

    assert old.get("/api/auth/me/").status_code == 401
    assert old.post(f"/api/daily/{daily.date.isoformat()}/attempt/").status_code == 401


async def test_a_new_api_token_leaves_the_sessions_and_their_sockets(daily: DailyDeal) -> None:
    player, cookie, slug = await signed_in_player()
    communicator, _ = await opened(paths(daily, slug)["league"], cookie)
    old_key = await database_sync_to_async(
        lambda: Token.objects.get_or_create(user=player)[0].key
    )()
    try:
        await database_sync_to_async(_token_rotate)(player)

        assert await communicator.receive_nothing(timeout=WITHIN)
    finally:
        await communicator.disconnect()
    # Sockets never signed in with a token, old or new.
    tokened = socket(
        paths(daily, slug)["day"], b"", (b"authorization", f"Token {old_key}".encode())
    )
    assert (await tokened.connect(timeout=5))[0]
    assert "me" not in await tokened.receive_json_from(timeout=5)
    await tokened.disconnect()


async def test_signing_out_closes_that_browsers_sockets_and_no_other(daily: DailyDeal) -> None:
    player, cookie, slug = await signed_in_player()
    other = await database_sync_to_async(session_of)(player)
    path = paths(daily, slug)["league"]
    leaving, _ = await opened(path, cookie)
    staying, _ = await opened(path, other)
    try:
        browser = Client(HTTP_COOKIE=cookie.decode())
        response = await database_sync_to_async(browser.post)(
            "/api/auth/logout/", "{}", content_type="application/json"
        )
        assert response.status_code == 204

        error = await leaving.receive_json_from(timeout=WITHIN)
        assert error["error"]["code"] == "session_ended"
        assert (await leaving.receive_output(timeout=WITHIN))["code"] == CLOSE_NOT_SIGNED_IN
        assert await staying.receive_nothing(timeout=WITHIN)
    finally:
        await leaving.disconnect()
        await staying.disconnect()
    assert await refusal(path, cookie) == CLOSE_NO_BOARD


def session_of(player: AbstractBaseUser) -> bytes:
    browser = Client()
    browser.force_login(player)
    return f"sessionid={browser.cookies['sessionid'].value}".encode()


async def test_a_sign_out_then_a_sign_out_everywhere_close_a_socket_once(daily: DailyDeal) -> None:
    # Two announcements, heard at once: each has the socket check its session.
    player, cookie, slug = await signed_in_player()
    communicator, _ = await opened(paths(daily, slug)["league"], cookie)
    try:
        browser = Client(HTTP_COOKIE=cookie.decode())
        signed_out = await database_sync_to_async(browser.post)(
            "/api/auth/logout/", "{}", content_type="application/json"
        )
        await database_sync_to_async(_logout_everywhere)(player)
        await database_sync_to_async(player_sessions_ended)(player_id=player.pk)

        assert signed_out.status_code == 204
        error = await communicator.receive_json_from(timeout=WITHIN)
        assert error["error"]["code"] == "session_ended"
        closed = await communicator.receive_output(timeout=WITHIN)
        assert closed == {"type": "websocket.close", "code": CLOSE_NOT_SIGNED_IN}
        # Nothing is sent to the closed socket.
        assert await communicator.receive_nothing(timeout=WITHIN)
    finally:
        await communicator.disconnect()
