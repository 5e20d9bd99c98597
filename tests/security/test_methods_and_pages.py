"""What every answer carries and refuses: methods nobody uses are a 405 in the
error shape, every page has a Content-Security-Policy the pages pass, and the
API renders JSON only (no browsable API) when DEBUG is off."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from ranking.actions import game_submit
from tests.security.conftest import WON_DEAL, WON_LOG, assert_error_shape

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("method", ["TRACE", "CONNECT", "PROPFIND", "MKCOL", "FOO"])
@pytest.mark.parametrize("path", ["/", "/api/daily/", "/accounts/login/", "/healthz"])
def test_methods_nobody_uses_are_a_405_in_the_error_shape(method: str, path: str) -> None:
    response = Client().generic(method, path)
    assert response.status_code == 405
    assert assert_error_shape(response.json())["code"] == "method_not_allowed"
    assert "TRACE" not in response["Allow"] and "GET" in response["Allow"]


@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS"])
def test_the_methods_in_use_still_answer(method: str) -> None:
    assert Client().generic(method, "/api/daily/2026-01-01/leaderboard/").status_code != 405


def test_a_refused_host_on_the_api_gets_the_error_shape() -> None:
    response = Client().get("/api/daily/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert assert_error_shape(response.json())["code"] == "bad_request"


# --- Content-Security-Policy -------------------------------------------------------


@pytest.fixture
def pages(daily: Any, player: Any) -> list[str]:
    """Every page of the site, a replay and a player page included; last, the replay
    of the running day's game, which a visitor finds locked."""
    game, _ = game_submit(player=player, deal=WON_DEAL, log=WON_LOG)
    other, _ = game_submit(player=player, deal="EH1-N-AAAAAAB", log="S")
    return [
        "/",
        "/play/",
        f"/replays/{other.pk}/",
        "/rules/",
        "/leaderboard/",
        f"/leaderboard/{daily.date.isoformat()}/",
        "/players/alice/",
        "/accounts/login/",
        "/accounts/signup/",
        "/admin/login/",
        "/api/docs/",
        f"/replays/{game.pk}/",
    ]


# Inline code a policy without 'unsafe-inline' blocks: script elements without
# src (JSON data blocks are not scripts), style elements and attributes, event
# handler attributes, javascript: URLs.
INLINE = [
    re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I),
    re.compile(r"<style\b", re.I),
    re.compile(r"\sstyle=", re.I),
    re.compile(r"\son[a-z]+=", re.I),
    re.compile(r"javascript:", re.I),
]


def test_every_page_has_a_policy_without_inline_script_or_style(pages: list[str]) -> None:
    client = Client()
    for path in pages:
        response = client.get(path)
        # The replay of the running day's game is locked for a visitor: a page all the same.
        assert response.status_code == (403 if path in pages[-1:] else 200), path
        policy = response["Content-Security-Policy"]
        directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
        assert directives["script-src"] == "'self'", (path, policy)
        assert directives["style-src"] == "'self'", (path, policy)
        assert directives["object-src"] == "'none'" and directives["frame-ancestors"] == "'none'"
        html = response.content.decode()
        for pattern in INLINE:
            assert not pattern.search(html), (path, pattern.pattern, pattern.search(html))


def test_the_api_docs_load_their_start_up_script_as_a_file() -> None:
    page = Client().get("/api/docs/").content.decode()
    [script_url] = re.findall(r'<script src="(/api/docs/\?script[^"]*)"', page)
    script = Client().get(script_url)
    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in script.content.decode()
