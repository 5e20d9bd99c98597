"""The day's screens as players meet them, in English, Spanish and Dutch, on a 320 px
phone (touch) and a 1366 px desktop: home, the play page's start step, a game under
way, the after-game panel and a race. Each is read as it shows (the page's language,
its headline, nothing wider than the screen, no script error) and its picture is
kept, whatever the run, in tests/artifacts/screens/ (not tracked): thirty pictures
for a person to look at after any change of the pages.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import translation
from django.utils.translation import gettext
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from races.models import Race
from tests.fixtures import WIN_LOG
from tests.races.racing import race_for, running

from .conftest import ARTIFACTS
from .test_browser import start_ranked
from .test_phone import send_actions

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

PHONE = (320, 640)
DESKTOP = (1366, 800)
SCREENS = ARTIFACTS / "screens"


def keep(page: Any, language: str, name: str) -> None:
    """The screen's picture, always written: what the screen shows on a phone (a whole
    page drops the touch emulation), the whole page on a desktop."""
    folder = SCREENS / language
    folder.mkdir(parents=True, exist_ok=True)
    width = page.viewport_size["width"]
    page.wait_for_function("() => document.getAnimations().length === 0")
    page.screenshot(path=str(folder / f"{name}-{width}.png"), full_page=width > PHONE[0])


def reads_well(page: Any, language: str, *words: str) -> None:
    """The page is in `language`, shows each of `words` (in that language), fits its
    width and ran without a script error."""
    assert page.get_attribute("html", "lang") == language
    text = page.inner_text("body")
    with translation.override(language):
        missing = [word for word in (gettext(word) for word in words) if word not in text]
    assert missing == [], missing
    assert page.evaluate("document.documentElement.scrollWidth") <= page.evaluate("innerWidth")
    assert page.errors == []


def devices(site: Any, path: str, language: str) -> list[Any]:
    """`path` for alice on a touch phone and for bob on a desktop."""
    alice, bob = (User.objects.get(username=name) for name in ("alice", "bob"))
    return [
        site(path, player=alice, language=language, width=PHONE[0], height=PHONE[1], touch=True),
        site(path, player=bob, language=language, width=DESKTOP[0], height=DESKTOP[1]),
    ]


def race_stored(page: Any, count: int) -> None:
    """Until the server has stored `count` actions of the page's race game; if it never
    does, the failure says what the page showed (its state, its messages)."""
    try:
        page.wait_for_selector(f'#race-play[data-stored="{count}"]')
    except PlaywrightTimeout:
        shown = page.evaluate(
            """() => { const play = document.getElementById("race-play");
                       return { ...play.dataset, text: play.innerText.slice(0, 500) }; }"""
        )
        raise AssertionError(f"{count} actions never stored; the page showed {shown}") from None


def play(page: Any, actions: list[str]) -> None:
    """The actions through the page's keyboard form (not shown on a touch screen)."""
    send_actions(page, " ".join(actions))


@pytest.mark.parametrize("language", ["en", "es", "nl"])
def test_the_days_screens_at_320_and_1366_px(site: Any, make_player: Any, language: str) -> None:
    """Alice plays today's game on her phone, Bob on his desktop, then they race."""
    alice, bob = make_player("alice"), make_player("bob")

    for page in devices(site, "/", language):
        page.wait_for_selector("#your-day[data-state='to-play']")
        reads_well(page, language, "Today's deal")
        keep(page, language, "home")

    third = len(WIN_LOG) // 3
    for page in devices(site, "/play/", language):
        page.wait_for_selector("#start-ranked:visible")
        reads_well(page, language, "Start today's ranked game")
        keep(page, language, "play-start")

        start_ranked(page)
        play(page, WIN_LOG[:third])
        page.wait_for_selector(f'#attempt[data-stored="{third}"]', state="attached")
        reads_well(page, language, "Score", "Moves")
        keep(page, language, "play-mid-game")

        play(page, WIN_LOG[third:])
        page.wait_for_selector("#aftergame:not([hidden])")
        page.locator("#aftergame").scroll_into_view_if_needed()
        reads_well(page, language, "Your ranked game", "Against par")
        keep(page, language, "after-game")

    race = running(race_for(alice, bob))
    racing = devices(site, f"/races/{race.code}/", language)
    for page in racing:
        # The race runs and the page has its game from the server (data-actions is
        # drawn once the socket's welcome brought the deal): keys count from here.
        page.wait_for_selector('#race-play[data-phase="running"][data-actions="0"]')
        play(page, WIN_LOG[:12])
        race_stored(page, 12)
    for page in racing:
        for name in ("alice", "bob"):
            page.wait_for_selector(f'#race-players li[data-player="{name}"]:not([data-moves="0"])')
        reads_well(page, language, "Race")
        keep(page, language, "race")
    for player in (alice, bob):
        assert Race.objects.get(pk=race.pk).racers.get(player=player).moves > 0
