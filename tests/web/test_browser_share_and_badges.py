"""The share and the badges in a real browser: after a won game the panel shows the
text to share (the day's number, the grid of the game's course, its result) and its
picture, and the badge the game just earned; the game's card page and the player's
badges, at 320 px and on a desktop, in English, Spanish and Dutch, with axe-core.

The same uvicorn and Chromium as `test_browser.py`; screenshots go to
tests/artifacts/ (ignored).
"""

from __future__ import annotations

import datetime
import re
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.utils import translation
from django.utils.translation import gettext
from playwright.sync_api import expect

from games.models import DailyDeal
from games.selectors import daily_day_number
from leaderboards.services import player_stats_recompute
from tests.fixtures import WIN, stored_game
from tests.web.conftest import shot
from tests.web.test_browser import log_in, play_keys, start_ranked
from tests.web.test_layout import axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

PHONE = {"width": 320, "height": 640}
DESKTOP = {"width": 1280, "height": 900}
# The deal's cards as the logs write them: none may show in a share.
CARD = re.compile(r"\b(10|[A2-9TJQK])[SHDC]\b")


@pytest.fixture
def streak_of_29(site, today, make_player):
    """alice has won the 29 days before today: a win today is a streak of 30."""
    alice = make_player("alice")
    for back in range(1, 30):
        daily = DailyDeal.objects.create(
            date=today - datetime.timedelta(days=back), number=200 + back, par=300
        )
        stored_game(player=alice, daily=daily, score=1250, moves=290, won=True)
    player_stats_recompute(player=alice)
    DailyDeal.objects.filter(date=today).update(par=WIN["moves"] - 3)
    return alice


def no_wider_than_the_screen(page: Any, selector: str) -> None:
    wider = page.evaluate(
        """(selector) => [...document.querySelectorAll(selector + ' *')]
            .filter(n => n.getBoundingClientRect().right > innerWidth + 0.5)
            .map(n => n.outerHTML.slice(0, 80))""",
        selector,
    )
    assert wider == []
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]


@pytest.mark.parametrize("language", ["en", "es", "nl"])
def test_after_a_win_the_panel_shows_the_share_its_picture_and_the_badge_just_earned(
    site, streak_of_29, today, language
) -> None:
    page = site("/play/", language=language, **DESKTOP)
    log_in(page, "alice")
    page.wait_for_url(re.compile(r"/play/"))
    start_ranked(page)
    play_keys(page, WIN["log"])
    page.wait_for_selector("#aftergame:not([hidden])")
    # A win is compared with the day's par: 3 moves over it (`streak_of_29`).
    expect(page.locator('#aftergame [data-slot="vs_par"]')).to_have_text("+3")

    preview = page.locator("#share-preview")
    expect(preview).to_contain_text(f"#{daily_day_number(today)}")
    # The grid drawn: four rows of eight squares, each with its count in words.
    expect(preview.locator(".grid-row")).to_have_count(4)
    assert all(
        preview.locator(".grid-row").nth(i).locator(".square").count() == 8 for i in range(4)
    )
    with translation.override(language):
        assert gettext("Streak: %(days)s day").split("%")[0] in preview.inner_text()
    # What the button shares: the same lines, the grid in squares.
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.evaluate("navigator.share = undefined")
    page.click("#share-button")
    expect(page.locator("[data-slot=share_state]")).not_to_be_empty()
    text = page.evaluate("navigator.clipboard.readText()")
    rows = text.splitlines()
    assert rows[0] == preview.locator("div").first.inner_text()
    # Each row of the grid says, in the page's language, what it counts: the cards put
    # away in its quarter, the four adding up to the whole deck for a win.
    words = preview.locator(".grid-words").all_inner_texts()
    assert [row.split(" ", 1)[1] for row in rows[1:5]] == words
    assert all(re.fullmatch("[🟩🟨⬛]{8}", row.split(" ", 1)[0]) for row in rows[1:5])
    # Each row's words name its quarter, then its count.
    assert sum(int(re.findall(r"\d+", w)[0]) for w in words) == 104
    with translation.override(language):
        assert gettext("no hint") in rows[6]
    assert not CARD.search(text) and WIN["log"] not in text
    # The picture is this game's card, drawn and loaded.
    picture = page.locator("#share-picture")
    expect(picture).to_be_visible()
    page.wait_for_function("() => document.getElementById('share-picture').naturalWidth === 1200")
    expect(page.locator("#card-link")).to_have_attribute("href", re.compile(r"/games/\d+/$"))
    # Thirty won days in a row, today's the thirtieth: the badge is earned today.
    badges = page.locator("#aftergame-badges")
    expect(badges).to_be_visible()
    with translation.override(language):
        assert gettext("Thirty in a row") in badges.inner_text()
    assert page.locator('#aftergame-badges [data-badge="streak_30"]').count() == 1
    assert axe_violations(page) == []
    shot(page.locator("#aftergame"), f"share-aftergame-{language}-desktop")
    shot(picture, f"share-picture-{language}")

    page.set_viewport_size(PHONE)
    no_wider_than_the_screen(page, "#aftergame")
    shot(page.locator("#aftergame"), f"share-aftergame-{language}-320")
    assert page.errors == []

    # The link leads to the game's own card: its result, its grid, and its picture.
    card_url = page.locator("#card-link").get_attribute("href")
    for size, name in ((PHONE, "320"), (DESKTOP, "desktop")):
        card = site(urlsplit(card_url).path, language=language, **size)
        expect(card.locator("#card-grid .grid-row")).to_have_count(4)
        assert card.locator("#card-grid .grid-words").all_inner_texts() == words
        card.wait_for_function(
            "() => document.getElementById('card-picture').naturalWidth === 1200"
        )
        no_wider_than_the_screen(card, "#game-card")
        assert axe_violations(card) == []
        shot(card, f"share-card-page-{language}-{name}")


@pytest.mark.parametrize("language", ["en", "es", "nl"])
def test_the_players_page_shows_the_months_badges_earned_and_in_progress(
    site, streak_of_29, today, language
) -> None:
    alice = streak_of_29
    stored_game(
        player=alice,
        daily=DailyDeal.objects.get(date=today),
        score=1250,
        moves=WIN["moves"],
        won=True,
        announce=True,
    )
    for size, name in ((PHONE, "320"), (DESKTOP, "desktop")):
        page = site("/players/alice/", language=language, **size)
        section = page.locator("#player-badges")
        expect(section.locator(".badge-item")).to_have_count(4)
        expect(section.locator('.badge-item.earned[data-badge="streak_30"]')).to_have_count(1)
        with translation.override(language):
            assert gettext("Thirty in a row") in section.inner_text()
            earned = gettext("Earned on %(date)s") % {"date": today.isoformat()}
        assert earned in section.locator('[data-badge="streak_30"]').inner_text()
        # This month's other badges show how far alice is (every day of it so far,
        # but its first when it has 31 days and today is the last).
        played = min(today.day, 30)
        every_day = section.locator('[data-badge="every_day"] progress')
        assert every_day.get_attribute("value") == str(played)
        no_wider_than_the_screen(page, "#player-badges")
        assert axe_violations(page) == []
        shot(section, f"badges-player-{language}-{name}")
        assert page.errors == []
