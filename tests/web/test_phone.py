"""The play and race pages on a phone held upright, touched rather than typed on.

At 320 and 390 px each face-up card of a column shows a strip a finger can hit
(40 px tall or more, 30 px wide or more), the keyboard help and its typing box
are not shown on a touch screen, and in a race the others' progress stays on
screen while the player scrolls the table. Screenshots of the screen at 320, 390
and 768 px go to tests/artifacts/ when asked for (SCREENSHOTS=1).
"""

from __future__ import annotations

import datetime
import os
import shutil
from typing import Any

import pytest
from django.utils import timezone

from races.models import Race, Racer
from races.services import race_start
from tests.fixtures import DEAL_NUMBER, WIN_LOG
from tests.paths import ROOT

from .conftest import ARTIFACTS, DEAL_1, SCREENSHOTS
from .test_layout import CONTROLS_OVERLAPPING

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

PHONES = [(320, 568), (390, 844)]
SHOT_SIZES = [(320, 568), (390, 844), (768, 1024)]

# Each face-up card of a column with a card over it: the strip of it that shows
# (from its top to the next card's top) and its width.
FACE_UP_STRIPS = """() => [...document.querySelectorAll("#table .column")].flatMap((column) => {
  const cards = [...column.querySelectorAll(".card")];
  return cards.slice(0, -1).flatMap((card, i) => {
    if (!card.classList.contains("up")) return [];
    const box = card.getBoundingClientRect();
    const next = cards[i + 1].getBoundingClientRect();
    return [{ card: card.dataset.card, height: next.top - box.top, width: box.width }];
  });
})"""


def send_actions(page: Any, log: str) -> None:
    """The actions through the page's keyboard form, which a touch screen does not
    show (a player with a keyboard attached could still use it)."""
    page.evaluate(
        """(log) => { document.getElementById("action-input").value = log;
                      document.getElementById("keyboard-form").requestSubmit(); }""",
        log,
    )


def screen_shot(page: Any, name: str) -> None:
    """What the phone's screen shows, when asked for (SCREENSHOTS=1): the screen,
    not the whole page, since a whole-page picture drops the touch emulation."""
    if SCREENSHOTS:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def fits(page: Any) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= page.evaluate("innerWidth")
    assert page.evaluate(CONTROLS_OVERLAPPING) == []


@pytest.mark.parametrize(("width", "height"), SHOT_SIZES)
def test_a_practice_deal_on_a_phone_has_cards_a_finger_can_hit_and_no_keyboard_help(
    site: Any, width: int, height: int
) -> None:
    page = site(f"/play/?deal={DEAL_1}", width=width, height=height, touch=True)
    page.wait_for_selector('#table .column[data-place="c0"] .card.up')
    # 5C onto 6D, 8H onto 9S: two columns with two face-up cards each.
    send_actions(page, "41 52")
    page.wait_for_selector('#table .column[data-place="c1"] .card.up[data-index="1"]')
    # The moved cards have slid into place.
    page.wait_for_function("() => document.getAnimations().length === 0")
    strips = page.evaluate(FACE_UP_STRIPS)
    assert [strip["card"] for strip in strips] == ["6D", "9S"]
    if width in dict(PHONES):
        assert all(strip["height"] >= 40 and strip["width"] >= 30 for strip in strips), strips
    assert not page.locator("#keys-help").is_visible()
    assert not page.locator("#action-input").is_visible()
    fits(page)
    screen_shot(page, f"phone-play-{width}")
    if os.environ.get("README_SHOTS") == "1" and width == 320:
        shutil.copyfile(ARTIFACTS / "phone-play-320.png", ROOT / "docs" / "img" / "play-320.png")
    assert page.errors == []


def test_the_keyboard_help_shows_where_there_is_no_touch_screen(site: Any) -> None:
    page = site(f"/play/?deal={DEAL_1}", width=390, height=844)
    page.wait_for_selector('#table .column[data-place="c0"] .card.up')
    assert page.locator("#keys-help").is_visible()
    assert page.locator("#action-input").is_visible()


@pytest.mark.parametrize(("width", "height"), SHOT_SIZES)
def test_a_racer_on_a_phone_keeps_the_others_progress_in_view_below_the_table(
    site: Any, make_player: Any, width: int, height: int
) -> None:
    host, bob, carol = make_player("alice"), make_player("bob"), make_player("carol")
    race = Race.objects.create(
        code="phone-race", host=host, deal_number=DEAL_NUMBER, created_at=timezone.now(),
        time_limit=datetime.timedelta(minutes=10),
    )  # fmt: skip
    for player in (host, bob, carol):
        Racer.objects.create(race=race, player=player, joined_at=timezone.now())
    race_start(player=host, code=race.code)
    page = site(f"/races/{race.code}/", width=width, height=height, player=bob, touch=True)
    page.wait_for_selector('#race-play[data-phase="running"]')
    # Mid-race: twenty actions, columns grown past the first screen of a small phone.
    send_actions(page, " ".join(WIN_LOG[:20]))
    page.wait_for_selector('#race-play[data-stored="20"]')
    page.wait_for_selector('#race-players li[data-player="bob"][data-moves]:not([data-moves="0"])')
    assert not page.locator("#keys-help").is_visible()
    assert not page.locator("#action-input").is_visible()
    if width in dict(PHONES):
        # The strip is the page's last part: on a page taller than the screen, at
        # the top of the page, it shows only if it holds to the screen's bottom.
        if width == 320:
            assert page.evaluate("document.documentElement.scrollHeight") > height
        # At the page's top and with the table scrolled to the screen's top,
        # the strip is on screen, and compact.
        for scrolled in (False, True):
            if scrolled:
                page.locator("#table").evaluate("(table) => table.scrollIntoView()")
            strip = page.locator("#race-progress").bounding_box()
            assert strip is not None
            assert strip["y"] >= 0 and strip["y"] + strip["height"] <= height + 0.5, strip
            assert strip["height"] <= height / 3, strip
    fits(page)
    screen_shot(page, f"phone-race-{width}")
    assert page.errors == []
