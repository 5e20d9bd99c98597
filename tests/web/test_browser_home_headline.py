"""The home page's head in a real browser: the day's number as the headline and the
line that says what the game is, on the narrowest phone and a desktop, in every
language, without sideways scrolling. Screenshots go to tests/artifacts/."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from games.selectors import daily_day_number

from .conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

ABOUT = {
    "en": "A solitaire with two decks",
    "es": "Un solitario de dos barajas",
    "nl": "Een patience met twee kaartspellen",
}


@pytest.mark.parametrize("width", [320, 1366])
@pytest.mark.parametrize("language", ["en", "es", "nl"])
def test_the_home_page_opens_with_the_days_number_and_what_the_game_is(
    site: Any, today: Any, language: str, width: int
) -> None:
    page = site("/", language=language, width=width)
    title = page.locator("#day-title")
    expect(title).to_contain_text(f"Easy Harp Daily #{daily_day_number(today)}")
    expect(page.locator("#about-game")).to_contain_text(ABOUT[language])
    # The headline, then the line under it, both in the first screenful.
    top = page.evaluate(
        "() => [document.querySelector('#day-title'), document.querySelector('#about-game')]"
        ".map((node) => node.getBoundingClientRect().bottom)"
    )
    assert top[0] < top[1] < page.viewport_size["height"]
    shot(page, f"home-headline-{language}-{width}")
    # Nothing of it reaches past the window's right edge, the date included.
    past_the_edge = page.evaluate(
        "() => [...document.querySelectorAll('body *')]"
        ".filter((node) => node.getBoundingClientRect().right > innerWidth + 0.5)"
        ".map((node) => `${node.tagName} ${(node.textContent || '').slice(0, 40)}`)"
    )
    assert past_the_edge == []
