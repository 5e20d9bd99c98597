"""The live page when as many watch an attempt as the server allows, in a real browser.

The server here allows one watcher (`LIVE_WATCHERS_MAX`): a second viewer's
page says, in their language, that too many watch and tries again; once the
first viewer leaves, it goes live.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings

from tests.web.conftest import _serve_in_child, serving, shot
from tests.web.test_browser_watch import playing

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

FULL = {
    "en": "Too many people are watching this game: trying again in a moment.",
    "es": "Hay demasiadas personas viendo esta partida: lo volvemos a intentar en un momento.",
    "nl": "Er kijken te veel mensen naar dit spel mee: we proberen het zo opnieuw.",
}


def _one_watcher() -> None:
    _serve_in_child()
    settings.LIVE_WATCHERS_MAX = 1


@pytest.fixture(scope="module")
def server(django_db_setup: None, django_db_blocker: Any) -> Iterator[str]:
    with serving(django_db_blocker, _one_watcher) as address:
        yield address


@pytest.mark.parametrize("language", ["en", "es", "nl"])
def test_a_viewer_past_the_limit_is_told_and_goes_live_once_a_place_is_free(
    site: Any, make_player: Any, submit: Any, language: str
) -> None:
    alice, bob, carol = (make_player(name) for name in ("alice", "bob", "carol"))
    submit(bob, "S")
    submit(carol, "S")  # both have played the day
    player = playing(site, alice, 3)
    first = site("/live/alice/", player=bob)
    first.wait_for_selector('#watch-state[data-state="live"]')

    second = site("/live/alice/", player=carol, language=language, width=320)
    second.wait_for_function(
        "(text) => document.getElementById('watch-message').textContent === text",
        arg=FULL[language],
    )
    assert second.get_attribute("#watch-state", "data-state") == "offline"
    shot(second, f"watch-full-320-{language}")

    first.close()
    second.wait_for_selector('#watch-state[data-state="live"]')
    second.wait_for_function("() => document.getElementById('moves').textContent === '3'")
    assert second.inner_text("#watch-message") == ""
    assert second.errors == [] and player.errors == []
