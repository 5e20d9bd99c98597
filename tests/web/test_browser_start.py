"""The start step of today's ranked game, and a deal code that does not parse, in a
real browser: nothing starts the ranked attempt but the start button."""

from __future__ import annotations

import re
from typing import Any

import pytest

from games.models import Attempt
from tests.fixtures import DEAL
from tests.web.conftest import shot
from tests.web.test_browser import counters, engine, log_in, start_ranked

pytestmark = [pytest.mark.browser, pytest.mark.postgres]


def signed_in(site: Any, username: str, path: str = "/play/", **options: Any) -> Any:
    page = site(path, service_workers="block", **options)
    log_in(page, username)
    page.wait_for_url(re.compile(r"/play/"))
    return page


def test_nothing_starts_the_ranked_game_but_the_start_button(site: Any, make_player: Any) -> None:
    make_player("alice")
    page = signed_in(site, "alice")
    page.wait_for_selector('#attempt[data-mode="none"]', state="attached")

    # The start step stands in for the table: no card to tap, no key that plays.
    assert page.is_visible("#start-panel")
    assert "The clock starts when you press Start" in page.inner_text("#start-panel")
    assert "marks your game assisted" in page.inner_text("#start-panel")
    assert page.is_hidden("#table") and page.is_hidden("#game")
    assert page.is_hidden("#action-input")
    page.keyboard.press("s")
    # Even an action played by script is refused before the start.
    assert page.evaluate("window.easyHarp.act('S')") == "not_started"
    assert engine(page, "game.log") == []
    assert Attempt.objects.count() == 0

    start_ranked(page)

    assert Attempt.objects.filter(player__username="alice").count() == 1
    assert page.is_hidden("#start-panel")
    assert "the clock is running" in page.inner_text("#attempt")
    page.wait_for_selector("#clock:not([hidden])")
    page.click('[data-place="s"]')
    page.wait_for_function("() => document.getElementById('moves').textContent === '1'")
    assert counters(page)[1] == 1

    # Once started, the page opens on the table: no start step any more.
    page.reload()
    page.wait_for_selector('#attempt[data-mode="open"]', state="attached")
    assert page.locator("#start-panel").count() == 0
    assert engine(page, "game.log") == ["S"]


def test_a_visitor_is_asked_to_sign_in_and_is_shown_no_table_of_the_day(site: Any) -> None:
    page = site("/play/")
    page.wait_for_selector("#anonymous-notice")
    assert "opens for practice once you have played it" in page.inner_text("#anonymous-notice")
    assert page.is_hidden("#table") and page.is_hidden("#action-input")
    assert page.evaluate("window.easyHarp.act('S')") == "not_started"
    assert engine(page, "game.log") == []


def test_a_bad_code_says_why_offers_the_days_deal_and_starts_nothing(
    site: Any, make_player: Any
) -> None:
    make_player("alice")
    page = signed_in(site, "alice", path="/play/?deal=EH1-N-AAAAAF")

    page.wait_for_selector("#deal-error")
    assert "has 6" in page.inner_text('#deal-error [role="alert"]')
    assert page.locator("#table").count() == 0
    assert DEAL not in page.content()
    assert Attempt.objects.count() == 0

    # The day's deal is a choice: it opens on the start step, still nothing started.
    page.click("#open-daily")
    page.wait_for_selector('#attempt[data-mode="none"]', state="attached")
    assert page.is_visible("#start-ranked")
    assert Attempt.objects.count() == 0


@pytest.mark.parametrize("language", ["en", "es", "nl"])
@pytest.mark.parametrize("width", [320, 1366])
def test_the_start_step_fits_and_reads_in_every_language(
    site: Any, make_player: Any, language: str, width: int
) -> None:
    make_player("alice")
    page = signed_in(site, "alice", language=language, width=width)
    panel = page.wait_for_selector("#start-panel")
    # Nothing runs off the side of the screen, on a phone or a desktop.
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert panel.bounding_box()["width"] <= width
    button = page.locator("#start-ranked")
    assert button.is_visible() and button.bounding_box()["x"] >= 0
    shot(page, f"start-step-{language}-{width}")
