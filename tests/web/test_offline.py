"""The site as an installable app: its manifest, and the day's deal played
offline once loaded, the game submitted once when the network is back."""

from __future__ import annotations

import re
from typing import Any

import pytest

from games.models import Attempt, Game
from tests.fixtures import WIN, WIN_LOG

from .conftest import fill_log_in, shot
from .test_browser import start_ranked

pytestmark = [pytest.mark.browser, pytest.mark.postgres]


def test_the_manifest_and_the_service_worker_are_served(site) -> None:
    page = site("/")
    manifest = page.evaluate(
        "async () => (await fetch(document.querySelector('link[rel=manifest]').href)).json()"
    )
    assert manifest["start_url"] == "/play/"
    assert manifest["display"] == "standalone"
    assert manifest["icons"][0]["type"] == "image/svg+xml"
    page.wait_for_function("async () => (await navigator.serviceWorker.ready).active !== null")


def signed_in_with_the_service_worker(site, make_player) -> Any:
    """The play page of a signed-in "alice", once the service worker has taken
    over and keeps the page and its files."""
    make_player("alice")
    page = site("/accounts/login/?next=/play/")
    fill_log_in(page, "alice")
    page.wait_for_url(re.compile(r"/play/$"))
    page.wait_for_function("async () => (await navigator.serviceWorker.ready).active !== null")
    page.reload()
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    return page


def test_offline_the_start_step_waits_for_the_server_and_nothing_is_played_before(
    site, make_player
) -> None:
    page = signed_in_with_the_service_worker(site, make_player)

    page.context.set_offline(True)
    reach = "(path) => fetch(path).then(() => 'online', () => 'offline')"
    assert page.evaluate(reach, "/healthz/") == "offline"
    # The service worker is offline too: a page it would keep but never got fails.
    assert page.evaluate(reach, "/rules/") == "offline"
    response = page.reload()
    assert response is not None and response.from_service_worker
    page.wait_for_function("() => window.easyHarp?.attempt.mode === 'none'")
    # The clock cannot start: the page says why, and the day's table stays hidden.
    assert "cannot be reached" in page.inner_text("#attempt-notice")
    assert page.locator("#table").is_hidden()
    page.click("#start-ranked")
    page.wait_for_function("() => window.easyHarp.attempt.mode === 'starting'")
    assert page.locator("#table").is_hidden()
    assert Attempt.objects.count() == 0
    shot(page, "play-offline-start")

    # Back online, the start goes through: the ranked game is played and stored once.
    page.context.set_offline(False)
    page.wait_for_selector('#attempt[data-mode="open"]', state="attached")
    page.fill("#action-input", " ".join(WIN_LOG))
    page.press("#action-input", "Enter")
    page.wait_for_selector("#replay-link")
    game = Game.objects.get()
    assert (game.player.username, game.ranked, game.won) == ("alice", True, True)
    assert_stored_once(page)


def test_a_ranked_game_goes_on_offline_and_is_ranked_once_back_online(site, make_player) -> None:
    # Its clock started on the server before the network went: it runs on
    # there, so the game stays the ranked attempt's.
    page = signed_in_with_the_service_worker(site, make_player)
    start_ranked(page)
    page.fill("#action-input", " ".join(WIN_LOG[:10]))
    page.press("#action-input", "Enter")
    page.wait_for_function("() => window.easyHarp.attempt.mode === 'open'")

    page.context.set_offline(True)
    page.reload()
    page.wait_for_function("() => window.easyHarp !== undefined")
    page.fill("#action-input", " ".join(WIN_LOG[10:]))
    page.press("#action-input", "Enter")
    page.wait_for_selector("#table.won")
    assert Game.objects.count() == 0

    page.context.set_offline(False)
    page.wait_for_selector("#replay-link")
    game = Game.objects.get()
    assert (game.ranked, game.won, game.score) == (True, True, WIN["score"])
    assert Attempt.objects.get().status == "closed"


def assert_stored_once(page: Any) -> None:
    # A reload sends nothing again: the page knows the game is stored.
    page.reload()
    page.wait_for_selector("#replay-link")
    assert Game.objects.count() == 1


def test_a_log_out_forgets_the_kept_pages_that_show_the_player(site, make_player) -> None:
    page = signed_in_with_the_service_worker(site, make_player)
    page.goto(page.url.replace("/play/", "/rules/"))
    page.wait_for_function("() => localStorage.getItem('easyharp.kept-pages-for') === 'alice'")
    # The kept copy whatever the request's headers (the pages vary by cookie and language).
    kept = "async (path) => (await caches.match(path, { ignoreVary: true }))?.text() ?? null"
    assert "alice" in page.evaluate(kept, "/play/")
    assert "alice" in page.evaluate(kept, "/rules/")

    page.click("form[action='/accounts/logout/'] button")
    page.wait_for_url(re.compile(r"/$"))
    page.wait_for_function("() => localStorage.getItem('easyharp.kept-pages-for') === ''")
    # The copies that named alice are gone; the home page is kept as it is now.
    assert page.evaluate(kept, "/play/") is None
    assert page.evaluate(kept, "/rules/") is None
    assert "alice" not in page.evaluate(kept, "/")
    page.context.set_offline(True)
    reach = "(path) => fetch(path).then(() => 'online', () => 'offline')"
    assert page.evaluate(reach, "/play/") == "offline"
