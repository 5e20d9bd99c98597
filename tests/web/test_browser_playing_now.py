"""Who is playing now, in a real browser: a friend appears on the home and friends pages
as they start their ranked game and goes as they submit it; the watch link opens
once the viewer has played. The server here looks every second
(`PLAYING_NOW_POLL_SECONDS`); the test waits for each state, not for time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.utils import timezone

from games.services import attempt_start
from leagues import services
from ranking.actions import game_submit
from tests.fixtures import DEAL, WIN_LOG
from tests.web.conftest import _serve_in_child, serving, shot
from tests.web.test_browser_leagues import in_a_thread

pytestmark = [pytest.mark.browser, pytest.mark.postgres]


def _fast_looks() -> None:
    _serve_in_child()
    settings.PLAYING_NOW_POLL_SECONDS = 1


@pytest.fixture(scope="module")
def server(django_db_setup: None, django_db_blocker: Any) -> Iterator[str]:
    with serving(django_db_blocker, _fast_looks) as address:
        yield address


def starts(player: Any) -> None:
    attempt_start(player=player, date=timezone.now().date())


def submits(player: Any, log: list[str]) -> None:
    game_submit(player=player, deal=DEAL, log=log)


@pytest.mark.parametrize(("path", "width"), [("/", 320), ("/friends/", 1280)])
def test_a_friend_appears_as_they_start_and_goes_as_they_submit(
    site: Any, make_player: Any, submit: Any, path: str, width: int
) -> None:
    alice, bob, carol = make_player("alice"), make_player("bob"), make_player("carol")
    services.follow_add(follower=alice, followee=bob)
    league = services.league_create(owner=carol, name="Club")
    services.league_join(player=alice, code=league.invite_code)
    page = site(path, player=alice, width=width, height=800)
    page.wait_for_selector("#playing-now-none")

    in_a_thread(starts, bob)
    bob_row = page.locator('#playing-now-list li[data-player="bob"]')
    bob_row.wait_for()
    # Alice has not played: she sees who plays, and watches once she has.
    assert bob_row.locator("[data-watch-locked]").is_visible()
    assert bob_row.locator("a[data-watch]").count() == 0
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shot(page, f"playing-now-locked-{width}")

    in_a_thread(submits, bob, WIN_LOG)
    page.wait_for_selector("#playing-now-none")

    # Alice plays hers; carol, of her league, starts: the watch link is open.
    in_a_thread(submit, alice, WIN_LOG[:5])
    in_a_thread(starts, carol)
    watch = page.locator('#playing-now-list li[data-player="carol"] a[data-watch]')
    watch.wait_for()
    assert watch.get_attribute("href") == "/live/carol/"
    shot(page, f"playing-now-watch-{width}")
    watch.click()
    page.wait_for_url("**/live/carol/")
    assert page.errors == []
