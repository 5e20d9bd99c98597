"""Friends and leagues in a real browser: creating a league, its invite link, its live
board after a member's ranked game, follow buttons, and every page at phone width.

The same uvicorn and Chromium as `test_browser.py`; screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.db import connection

from leagues import services
from leagues.models import League
from tests.fixtures import WIN_LOG
from tests.web.conftest import shot
from tests.web.test_browser import log_in

pytestmark = [pytest.mark.browser, pytest.mark.postgres]


def signed_in(site: Any, username: str, path: str, **kwargs: Any) -> Any:
    page = site("/", **kwargs)
    log_in(page, username)
    page.wait_for_url(re.compile(r"/$"))
    page.goto(page.url.rstrip("/") + path)
    return page


def go(page: Any, server: str, path: str) -> None:
    page.goto(f"http://{server}{path}")


def in_a_thread(call: Any, *args: Any) -> Any:
    """Run `call` off this thread, whose event loop is Playwright's: the live boards'
    announcement after commit cannot run inside a running loop."""

    def run() -> Any:
        try:
            return call(*args)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()


def test_a_league_is_created_joined_by_its_link_and_its_board_moves_live(
    site, make_player, submit
) -> None:
    make_player("alice"), make_player("bob")
    owner = signed_in(site, "alice", "/leagues/")
    owner.fill("#league-name", "Friday club")
    owner.click("#create-league button[type=submit]")
    owner.wait_for_url(re.compile(r"/leagues/friday-club-"))
    league = League.objects.get()
    link = owner.input_value("#invite-link")
    assert link.endswith(f"/leagues/join/{league.invite_code}/")

    member = signed_in(site, "bob", f"/leagues/join/{league.invite_code}/")
    assert "Friday club" in member.inner_text("h1")
    member.click("#join-invite button[type=submit]")
    member.wait_for_url(re.compile(rf"/leagues/{league.slug}/$"))
    member.wait_for_selector('[data-live-state][data-state="live"]')
    assert "Nobody has played" in member.inner_text("table.board tbody")

    in_a_thread(submit, make_player("outsider"), WIN_LOG)  # not in the league
    in_a_thread(submit, league.owner, WIN_LOG)
    member.wait_for_selector('table.board tbody tr[data-player="alice"]')
    assert member.inner_text("[data-total]") == "1"
    assert "outsider" not in member.inner_text("table.board")
    shot(member, "league-live")

    stranger = signed_in(site, "outsider", f"/leagues/{league.slug}/")
    assert "Friday club" not in stranger.content()
    assert stranger.errors == []


def test_a_follow_button_follows_and_the_friends_board_shows_the_friend(
    site, server, make_player, submit
) -> None:
    make_player("alice")
    submit(make_player("bob"), WIN_LOG)
    page = signed_in(site, "alice", "/players/bob/")
    button = page.locator("h1 button.follow")
    assert button.inner_text() == "Follow"
    button.click()
    page.wait_for_selector('h1 button.follow[aria-pressed="true"]')
    assert button.inner_text() == "Unfollow"

    go(page, server, "/leaderboard/?scope=friends")
    page.wait_for_selector('[data-live-state][data-state="live"]')
    assert page.locator("#scope-friends.active").count() == 1
    page.wait_for_selector('table.board tbody tr[data-player="bob"] button.follow')
    shot(page, "friends-board")


@pytest.mark.parametrize("language", ["en", "es", "nl"])
def test_the_league_pages_fit_a_phone_and_a_desktop_in_every_language(
    site, server, make_player, submit, language
) -> None:
    alice = make_player("alice")
    bob = make_player("a-rather-long-player-name")
    league = services.league_create(owner=alice, name="The longest league name one may give")
    services.league_join(player=bob, code=league.invite_code)
    services.follow_add(follower=alice, followee=bob)
    submit(bob, WIN_LOG)
    submit(alice, ["S"])
    paths = [
        "/leagues/",
        f"/leagues/{league.slug}/",
        f"/leagues/join/{league.invite_code}/",
        "/standings/",
        "/leaderboard/?scope=friends",
        "/players/a-rather-long-player-name/",
        "/rules/",
    ]
    for width, height in ((320, 700), (1280, 900)):
        page = signed_in(site, "alice", paths[0], language=language, width=width, height=height)
        for path in paths:
            go(page, server, path)
            page.wait_for_load_state("networkidle")
            assert page.evaluate("document.documentElement.scrollWidth") <= width, path
            assert page.errors == [], path
            if path in paths[:2]:
                shot(page, f"{'league' if league.slug in path else 'leagues'}-{language}-{width}")
