"""Hostile input against the real API: every answer below 500, every refusal in the error shape."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings
from rest_framework.test import APIClient

from games.models import Game
from tests.security.conftest import WON_DEAL, assert_error_shape

pytestmark = pytest.mark.django_db


def refused(response: Any, status: int, code: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.content[:400])
    error = assert_error_shape(response.json())
    if code is not None:
        assert error["code"] == code, error
    return error


def submit(api: APIClient, body: Any, **extra: Any) -> Any:
    payload = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return api.post("/api/games/", payload, content_type="application/json", **extra)


# --- bodies ---------------------------------------------------------------------


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=200_000)
def test_a_huge_submission_body_is_413_and_stores_nothing(api: APIClient, daily: Any) -> None:
    body = {"deal": WON_DEAL, "log": "S " * 150_000}
    refused(submit(api, body), 413, "request_too_large")
    assert Game.objects.count() == 0


@pytest.mark.parametrize("depth", [50, 5_000, 200_000])
def test_deeply_nested_json_is_a_clear_400(api: APIClient, daily: Any, depth: int) -> None:
    body = '{"deal": "' + WON_DEAL + '", "log": ' + "[" * depth + "]" * depth + "}"
    response = submit(api, body)
    assert response.status_code == 400
    assert assert_error_shape(response.json())["code"] in {"parse_error", "invalid"}


@pytest.mark.parametrize(
    "body",
    [
        {"deal": 4, "log": "S"},
        {"deal": WON_DEAL, "log": 7},
        {"deal": WON_DEAL, "log": {"0": "S"}},
        {"deal": WON_DEAL, "log": ["S", 3]},
        {"deal": WON_DEAL, "log": [["S"]]},
        {"deal": WON_DEAL, "log": None},
        {"deal": None, "log": "S"},
        {"deal": [WON_DEAL], "log": "S"},
        {"deal": True, "log": "S"},
        {"log": "S"},
        {"deal": WON_DEAL},
        [],
        "S 37",
        12,
        None,
    ],
)
def test_wrong_types_are_a_400_invalid(api: APIClient, daily: Any, body: Any) -> None:
    response = submit(api, body)
    refused(response, 400)
    assert Game.objects.count() == 0


@pytest.mark.parametrize(
    "written",
    ["ß", "😀", "\u202e37", "Ｓ", "３７", "\u0000", "S\u0000", "'; DROP TABLE games;--", "<b>S"],
)
def test_unicode_and_injection_tokens_are_refused_with_their_index(
    api: APIClient, daily: Any, written: str
) -> None:
    response = submit(api, {"deal": WON_DEAL, "log": ["S", written]})
    assert response.status_code == 400
    error = assert_error_shape(response.json())
    if error["code"] == "illegal_action":
        assert error["index"] == 2
        assert error["reason_code"] == "unreadable_action"
    else:
        assert error["code"] == "invalid"
    assert Game.objects.count() == 0


@pytest.mark.parametrize(
    ("path", "deal"), [("/api/games/", WON_DEAL), ("/api/hint/", "EH1-N-AAAAAAB")]
)
def test_a_refused_token_is_echoed_cut_short_however_long_it_is(
    api: APIClient, daily: Any, path: str, deal: str
) -> None:
    token = "Z" * 800_000
    response = api.post(
        path, json.dumps({"deal": deal, "log": ["S", token]}), content_type="application/json"
    )
    error = refused(response, 400, "illegal_action")
    assert error["token"] == "Z" * 40 + "…"
    assert error["message"] == f'action 2 "{"Z" * 40}…": {error["reason"]}'
    assert len(response.content) < 2_000


def test_a_log_of_twenty_thousand_and_one_actions_is_refused(api: APIClient, daily: Any) -> None:
    error = refused(submit(api, {"deal": WON_DEAL, "log": ["S"] * 20_001}), 400, "log_too_long")
    assert error["actions"] == 20_001
    assert Game.objects.count() == 0


def test_a_log_of_exactly_twenty_thousand_actions_is_accepted(api: APIClient, daily: Any) -> None:
    response = submit(api, {"deal": WON_DEAL, "log": " ".join(["S"] * 20_000)})
    assert response.status_code == 201, response.content[:300]
    assert response.json()["actions"] == 20_000


@pytest.mark.parametrize(
    "deal",
    [
        "EH1-N-AAAAAAA",  # deal 0
        "EH1-N-ZZZZZZZ",  # beyond 999,999
        "EH1-N-AACEXHO",  # 1,000,000
        "-1",
        "0",
        "99999999999999999999999",
        "EH1-N-AAAAAA",
        "EH2-N-AAAAAAB",
        "",
        "EH1-N-ＡＡＡＡＡＡＢ",
        "x" * 65,
    ],
)
def test_bad_deal_codes_are_a_400(api: APIClient, daily: Any, deal: str) -> None:
    response = submit(api, {"deal": deal, "log": "S"})
    error = refused(response, 400)
    assert error["code"] in {"invalid_deal", "invalid"}
    assert Game.objects.count() == 0


@pytest.mark.parametrize("code", ["EH1-N-AAAAAAA", "EH1-N-ZZZZZZZ", "-1", "0", "%F0%9F%98%80"])
def test_bad_deal_codes_in_the_url_are_a_404(code: str) -> None:
    refused(APIClient().get(f"/api/deals/{code}/"), 404)


@pytest.mark.parametrize(
    "date",
    [
        "2026-02-30",
        "2026-13-01",
        "0000-01-01",
        "9999-12-31",
        "-2026-01-01",
        "today",
        "2026-1-1x",
        "1970-01-01",
        "%F0%9F%98%80",
    ],
)
def test_bad_or_unserved_dates_are_a_404(date: str) -> None:
    refused(APIClient().get(f"/api/daily/{date}/"), 404)
    refused(APIClient().get(f"/api/daily/{date}/leaderboard/"), 404)


@pytest.mark.parametrize(
    "query",
    [
        "offset=100000000000000000000000",
        "offset=-1",
        "limit=0",
        "limit=99999999999999999999",
        "limit=abc",
        "order=<script>",
        "around=you",
        "order=score&order=moves%00",
    ],
)
def test_bad_leaderboard_parameters_are_a_400(daily: Any, query: str) -> None:
    response = APIClient().get(f"/api/daily/{daily.date.isoformat()}/leaderboard/?{query}")
    refused(response, 400)


@pytest.mark.parametrize(
    "path",
    [
        "/api/players/a%00b/",
        "/players/a%00b/",
        "/api/games/?x=%00",
        "/leaderboard/%00/",
        "/api/deals/%00/",
        "/api/daily/%00/",
    ],
)
def test_a_nul_character_anywhere_in_the_url_is_a_400(path: str) -> None:
    refused(APIClient().get(path), 400, "bad_request")


def test_a_nul_character_in_a_header_is_a_400(api: APIClient, daily: Any) -> None:
    response = submit(api, {"deal": WON_DEAL, "log": "S"}, HTTP_IDEMPOTENCY_KEY="key\x00")
    refused(response, 400, "bad_request")
    assert Game.objects.count() == 0


@pytest.mark.parametrize("game_id", ["0", "99999999999999999999999999", "9223372036854775808"])
def test_huge_game_ids_are_a_404(game_id: str) -> None:
    refused(APIClient().get(f"/api/games/{game_id}/"), 404)
    refused(APIClient().get(f"/api/games/{game_id}/replay/"), 404)


# --- usernames ------------------------------------------------------------------


def register(username: str, password: str = "an-unusual-passphrase-7") -> Any:
    return APIClient().post(
        "/api/auth/register/",
        json.dumps({"username": username, "password": password}),
        content_type="application/json",
    )


@pytest.mark.parametrize("username", ["名前", "Ærøskøbing", "ǅemal", "joão.silva@x", "δ-1+2"])
def test_unicode_usernames_that_django_allows_can_sign_up(username: str) -> None:
    response = register(username)
    assert response.status_code == 201, response.content
    assert APIClient().get(f"/api/players/{response.json()['username']}/").status_code == 200


@pytest.mark.parametrize(
    "username",
    [
        "<script>alert(1)</script>",
        "robert'); DROP TABLE auth_user;--",
        'x" onmouseover="alert(1)',
        "zero\u200bwidth",
        "rtl\u202eevil",
        "tab\tname",
        "nul\x00name",
        "",
        "a" * 151,
        "slash/name",
    ],
)
def test_hostile_usernames_are_refused_in_the_error_shape(username: str) -> None:
    refused(register(username), 400)
    assert not get_user_model().objects.exists()


@pytest.mark.parametrize("variant", ["ALICE", "Alice", "ａｌｉｃｅ", "ＡＬＩＣＥ"])
def test_a_username_that_normalizes_to_a_taken_one_is_refused(variant: str) -> None:
    assert register("alice").status_code == 201
    refused(register(variant), 409, "username_taken")
    assert get_user_model().objects.count() == 1


@pytest.mark.parametrize("password", ["\x00" * 10, "p" * 129, "😀" * 40])
def test_odd_passwords_never_fail_on_the_server(password: str) -> None:
    response = register("bob", password)
    assert response.status_code in {201, 400}
    if response.status_code == 400:
        assert_error_shape(response.json())


@pytest.mark.parametrize(
    "header",
    [
        "Token ",
        "Token \x7f",
        # What the server sees for UTF-8 bytes: ASGI headers are decoded as latin-1.
        "Token " + "😀".encode().decode("latin-1"),
        "Token " + "a" * 5000,
        "Bearer x",
        "Token a b",
        "Basic Og==",
    ],
)
def test_malformed_authorization_headers_are_a_401_in_the_error_shape(
    daily: Any, header: str
) -> None:
    response = submit(APIClient(), {"deal": WON_DEAL, "log": "S"}, HTTP_AUTHORIZATION=header)
    assert response.status_code in {401, 403}
    assert_error_shape(response.json())


@pytest.mark.parametrize(
    ("content_type", "status", "code"),
    [
        ("text/plain", 415, "unsupported_media_type"),
        ("application/xml", 415, "unsupported_media_type"),
        ("application/json; charset=utf-32", 400, "parse_error"),
    ],
)
def test_bodies_of_the_wrong_media_type_are_refused_in_the_error_shape(
    api: APIClient, daily: Any, content_type: str, status: int, code: str
) -> None:
    response = api.post("/api/games/", '{"deal": "x", "log": "S"}', content_type=content_type)
    refused(response, status, code)


@pytest.mark.parametrize(
    ("path", "body"),
    [("/api/games/", "deal=EH1-N-AAAAAAB&log=S&practice=true"), ("/api/races/", "minutes=5")],
)
def test_the_endpoints_with_typed_json_fields_take_json_only(
    api: APIClient, daily: Any, path: str, body: str
) -> None:
    # A form's "true" or "5" is text: the schema's boolean and number are JSON's.
    response = api.post(path, body, content_type="application/x-www-form-urlencoded")
    refused(response, 415, "unsupported_media_type")


def test_an_unsatisfiable_accept_header_is_a_406_in_the_error_shape() -> None:
    refused(APIClient().get("/api/daily/", HTTP_ACCEPT="application/xml"), 406, "not_acceptable")
