"""Rematch in a real browser: once a race is over, one of its players presses Rematch;
the others' pages turn to "Join the rematch" at once (over the race's socket), an
onlooker's shows a link to it, and one click puts a player in the rematch's lobby,
which names who of the last race has not joined yet."""

from __future__ import annotations

from typing import Any

import pytest

from races.models import Race
from tests.fixtures import WIN_LOG
from tests.races.racing import race_for, running, store
from tests.web.conftest import shot
from tests.web.test_browser_leagues import in_a_thread

pytestmark = [pytest.mark.browser, pytest.mark.postgres]


def won_by_alice(alice: Any, bob: Any, carol: Any) -> Race:
    race = running(race_for(alice, bob, carol))
    assert store(race, alice, WIN_LOG) == "saved"
    return race


def test_a_player_makes_the_rematch_and_the_others_join_it_in_one_click(
    site: Any, make_player: Any
) -> None:
    alice, bob, carol = make_player("alice"), make_player("bob"), make_player("carol")
    race = in_a_thread(won_by_alice, alice, bob, carol)
    path = f"/races/{race.code}/"
    bob_page = site(path, player=bob, width=320, height=700)
    onlooker = site(path)
    carol_page = site(path, player=carol)
    for page in (bob_page, carol_page):
        page.wait_for_selector("#race-rematch-make")
        assert page.locator("#race-rematch-join").is_hidden()
    assert onlooker.locator("#race-rematch-link").is_hidden()
    shot(bob_page, "race-rematch-offered-320")

    carol_page.click("#race-rematch-make")
    carol_page.wait_for_selector("#race-lobby")
    assert carol_page.locator("#race-invited [data-player]:visible").all_inner_texts() == [
        "alice",
        "bob",
    ]
    rematch = Race.objects.get(rematch_of=race)
    assert carol_page.url.endswith(f"/races/{rematch.code}/")

    # Bob's page and the onlooker's hear of it on the race's socket.
    bob_page.wait_for_selector("#race-rematch-join")
    assert bob_page.locator("#race-rematch-make").is_hidden()
    link = onlooker.locator("#race-rematch-link")
    link.wait_for()
    assert link.get_attribute("href") == f"/races/{rematch.code}/"
    shot(bob_page, "race-rematch-join-320")

    bob_page.click("#race-rematch-join")
    bob_page.wait_for_selector('#race-players li[data-player="bob"]')
    assert bob_page.url.endswith(f"/races/{rematch.code}/")
    assert bob_page.locator('#race-players li[data-player="carol"]').count() == 1
    assert bob_page.inner_text("#race-invited").split(":")[-1].split() == ["alice"]
    # The host's lobby hears bob come in: he is no longer waited for.
    carol_page.wait_for_selector('#race-invited [data-player="bob"]', state="hidden")
    assert carol_page.locator("#race-invited [data-player]:visible").all_inner_texts() == ["alice"]
    assert bob_page.evaluate("document.documentElement.scrollWidth") <= 320
    shot(bob_page, "race-rematch-lobby-320")
    for page in (bob_page, onlooker, carol_page):
        assert page.errors == []
