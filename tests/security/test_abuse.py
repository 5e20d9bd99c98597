"""Abuse: rate limits on the real endpoints, CSRF on session writes and browser
forms, the admin for staff only, and hostile text rendered escaped on every page."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from rest_framework.test import APIClient

from games.models import DailyDeal, Game
from ranking.actions import game_submit
from tests.fixtures import close_day
from tests.security.conftest import PASSWORD, WON_DEAL, WON_LOG, assert_error_shape

pytestmark = pytest.mark.django_db


def rates(**scopes: str) -> dict[str, Any]:
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {**rest["DEFAULT_THROTTLE_RATES"], **scopes}
    return rest


def post_json(client: Client, path: str, body: Any, **extra: Any) -> Any:
    return client.post(path, json.dumps(body), content_type="application/json", **extra)


# --- rate limits ----------------------------------------------------------------


def test_sign_up_is_rate_limited_per_address() -> None:
    client = APIClient()
    with override_settings(REST_FRAMEWORK=rates(signup="2/hour")):
        codes = [
            post_json(
                client, "/api/auth/register/", {"username": f"p{i}", "password": PASSWORD}
            ).status_code
            for i in range(3)
        ]
        last = post_json(client, "/api/auth/register/", {"username": "p9", "password": PASSWORD})
    assert codes == [201, 201, 429]
    assert assert_error_shape(last.json())["code"] == "throttled"
    assert get_user_model().objects.count() == 2


def test_token_requests_are_rate_limited_so_passwords_cannot_be_guessed_quickly(
    player: Any,
) -> None:
    client = APIClient()
    with override_settings(REST_FRAMEWORK=rates(auth="3/min")):
        codes = [
            post_json(
                client, "/api/auth/token/", {"username": "alice", "password": f"guess-{i}"}
            ).status_code
            for i in range(5)
        ]
    assert codes == [401, 401, 401, 429, 429]


def test_submissions_are_rate_limited_per_player(
    api: APIClient, daily: DailyDeal, make_player: Any
) -> None:
    from rest_framework.authtoken.models import Token

    bob = APIClient()
    bob.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=make_player('bob')).key}")
    with override_settings(REST_FRAMEWORK=rates(submit="2/min")):
        codes = [
            post_json(api, "/api/games/", {"deal": WON_DEAL, "log": "S"}).status_code
            for _ in range(3)
        ]
        # Another player behind the same address is not held up.
        bob_code = post_json(bob, "/api/games/", {"deal": WON_DEAL, "log": "S"}).status_code
    assert codes == [201, 201, 429]
    assert bob_code == 201
    assert Game.objects.count() == 3


def test_reads_are_not_rate_limited(daily: DailyDeal) -> None:
    client = APIClient()
    with override_settings(REST_FRAMEWORK=rates(signup="1/hour", auth="1/hour", submit="1/hour")):
        for _ in range(5):
            assert client.get("/api/daily/").status_code == 200
            assert client.get(f"/api/daily/{daily.date}/leaderboard/").status_code == 200


# --- CSRF -----------------------------------------------------------------------


def csrf_client() -> Client:
    return Client(enforce_csrf_checks=True)


def csrf_token(client: Client, path: str) -> str:
    page = client.get(path)
    assert page.status_code == 200
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())
    assert match, f"no CSRF field in the form at {path}"
    return match.group(1)


@pytest.mark.parametrize("path", ["/accounts/login/", "/accounts/signup/"])
def test_browser_forms_carry_a_csrf_token_and_refuse_posts_without_it(
    path: str, player: Any
) -> None:
    client = csrf_client()
    token = csrf_token(client, path)
    form = {"username": "alice", "password": PASSWORD, "password1": PASSWORD}
    assert client.post(path, form).status_code == 403
    with_token = client.post(path, {**form, "csrfmiddlewaretoken": token})
    assert with_token.status_code in {200, 302}


def test_logout_and_language_forms_need_the_csrf_token(player: Any) -> None:
    client = csrf_client()
    client.force_login(player)
    assert client.post("/accounts/logout/").status_code == 403
    assert client.post("/i18n/setlang/", {"language": "es"}).status_code == 403


def test_session_login_through_the_api_needs_the_csrf_token(player: Any) -> None:
    client = csrf_client()
    body = {"username": "alice", "password": PASSWORD}
    refused = post_json(client, "/api/auth/login/", body)
    assert refused.status_code == 403
    assert_error_shape(refused.json())
    token = csrf_token(client, "/accounts/login/")
    accepted = post_json(client, "/api/auth/login/", body, HTTP_X_CSRFTOKEN=token)
    assert accepted.status_code == 200


def test_a_session_signed_submission_needs_the_csrf_token(player: Any, daily: DailyDeal) -> None:
    client = csrf_client()
    client.force_login(player)
    refused = post_json(client, "/api/games/", {"deal": WON_DEAL, "log": "S"})
    assert refused.status_code == 403
    assert_error_shape(refused.json())
    assert Game.objects.count() == 0
    token = csrf_token(client, "/accounts/login/")
    accepted = post_json(
        client, "/api/games/", {"deal": WON_DEAL, "log": "S"}, HTTP_X_CSRFTOKEN=token
    )
    assert accepted.status_code == 201, accepted.content
    assert Game.objects.count() == 1


def test_token_clients_need_no_csrf_token(api: APIClient, daily: DailyDeal) -> None:
    api.enforce_csrf_checks = True
    assert post_json(api, "/api/games/", {"deal": WON_DEAL, "log": "S"}).status_code == 201


# --- admin ----------------------------------------------------------------------


def test_the_admin_is_for_staff_only(make_player: Any) -> None:
    client = Client()
    assert client.get("/admin/").status_code == 302
    client.force_login(make_player("player"))
    response = client.get("/admin/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    assert client.get("/admin/games/game/").status_code == 302
    staff = Client()
    staff.force_login(make_player("moderator", is_staff=True, is_superuser=True))
    assert staff.get("/admin/").status_code == 200
    assert staff.get("/admin/games/game/").status_code == 200


def test_a_player_cannot_log_in_to_the_admin_with_the_right_password(make_player: Any) -> None:
    make_player("player")
    client = Client()
    response = client.post("/admin/login/", {"username": "player", "password": PASSWORD})
    assert response.status_code == 200  # the form again, with an error
    assert client.get("/admin/").status_code == 302


# --- escaping -------------------------------------------------------------------

# No "/": no username can hold one (the validator refuses it), and URLs need it not to.
HOSTILE_NAMES = [
    "<svg onload=alert(1)>",
    '"><img src=x onerror=alert(1)>',
    "'; DROP TABLE auth_user;--",
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_names_are_rendered_escaped_on_every_page(
    name: str, daily: DailyDeal, make_player: Any
) -> None:
    # Such names cannot sign up; here one is written straight to the database,
    # as a careless import or admin edit could.
    hostile = make_player(name)
    game, _ = game_submit(player=hostile, deal=WON_DEAL, log=WON_LOG[:30])
    viewer = Client()
    viewer.force_login(make_player("viewer"))
    day = daily.date.isoformat()
    pages = [
        "/",
        "/play/",
        "/leaderboard/",
        f"/leaderboard/{day}/",
        f"/leaderboard/{day}/?order=moves",
        f"/replays/{game.pk}/",
        f"/players/{quote(name, safe='')}/",
        "/rules/",
    ]
    shown = 0
    for path in pages:
        for client in (Client(), viewer):
            response = client.get(path)
            # The running day's replay is locked for both: its page names the player too.
            expected = 403 if path.startswith("/replays/") else 200
            assert response.status_code == expected, (path, response.status_code)
            html = response.content.decode()
            if "<" in name or '"' in name:
                assert name not in html, f"{path} renders {name!r} unescaped"
            shown += html.count("&lt;svg") + html.count("\\u003Csvg")
            shown += html.count("&quot;&gt;&lt;img") + html.count("&#x27;; DROP")
    assert shown > 0, "the name was not shown anywhere, so nothing was checked"


@pytest.mark.parametrize(
    "path",
    [
        "/play/?deal=<script>alert(1)</script>",
        "/leaderboard/?order=<script>alert(1)</script>",
        "/leaderboard/<script>alert(1)<%2Fscript>/",
        "/replays/1/?frame=<script>alert(1)</script>",
        "/players/<script>alert(1)<%2Fscript>/",
        "/accounts/login/?next=<script>alert(1)</script>",
    ],
)
def test_hostile_query_text_is_never_reflected_raw(path: str, daily: DailyDeal) -> None:
    response = Client().get(path)
    assert response.status_code < 500
    assert "<script>alert(1)</script>" not in response.content.decode()


def test_replays_are_rate_limited_per_client_because_long_ones_are_costly(
    api: APIClient, daily: DailyDeal
) -> None:
    game = post_json(api, "/api/games/", {"deal": WON_DEAL, "log": "S S S"}).json()
    close_day(daily)  # its replay is everyone's
    client = APIClient()
    with override_settings(REST_FRAMEWORK=rates(replay="2/min")):
        codes = [client.get(f"/api/games/{game['id']}/replay/").status_code for _ in range(3)]
        refused = client.get(f"/api/games/{game['id']}/replay/")
        # The game itself, and other reads, stay open.
        assert client.get(f"/api/games/{game['id']}/").status_code == 200
    assert codes == [200, 200, 429]
    assert assert_error_shape(refused.json())["code"] == "throttled"


@pytest.mark.parametrize(
    ("path", "scope", "form"),
    [
        ("/accounts/login/", "auth", {"username": "alice", "password": "wrong-guess"}),
        ("/accounts/signup/", "signup", {"username": "x", "password1": "a", "password2": "b"}),
    ],
)
def test_the_browser_forms_share_the_api_rate_limits(
    path: str, scope: str, form: dict[str, str], player: Any
) -> None:
    client = Client()
    with override_settings(REST_FRAMEWORK=rates(**{scope: "2/min"})):
        assert client.get(path).status_code == 200
        codes = [client.post(path, form).status_code for _ in range(3)]
        # Viewing the form is never limited.
        assert client.get(path).status_code == 200
    assert codes[:2] == [200, 200]
    assert codes[2] == 429


def test_password_guesses_on_the_form_and_the_api_share_one_counter(player: Any) -> None:
    client = APIClient()
    with override_settings(REST_FRAMEWORK=rates(auth="2/min")):
        assert (
            client.post("/accounts/login/", {"username": "alice", "password": "g1"}).status_code
            == 200
        )
        body = {"username": "alice", "password": "g2"}
        assert post_json(client, "/api/auth/token/", body).status_code == 401
        assert post_json(client, "/api/auth/token/", body).status_code == 429


def test_admin_password_guesses_are_rate_limited_too(make_player: Any) -> None:
    make_player("moderator", is_staff=True)
    client = Client()
    form = {"username": "moderator", "password": "guess"}
    with override_settings(REST_FRAMEWORK=rates(auth="2/min")):
        codes = [client.post("/admin/login/", form).status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    right = {"username": "moderator", "password": PASSWORD}
    assert client.post("/admin/login/", right).status_code == 302  # limits lifted: signed in
