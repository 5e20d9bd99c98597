"""No spoilers in the browser: while the day runs, a player who has not played it
sees the board's ranks with a lock where the replays would be, and the replay
page says when it opens; once they have played, the links lead to the replays."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import translation
from django.utils.translation import gettext
from playwright.sync_api import expect

from tests.fixtures import DEAL, WIN_LOG
from tests.web.conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

LOCK_TEXT = "Replays of today's games open once you have played, or at 00:00 UTC."


def lock_text(language: str) -> str:
    with translation.override(language):
        return gettext(LOCK_TEXT)


def no_sideways_scroll(page: Any) -> None:
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


@pytest.mark.parametrize("language", ["en", "es", "nl"])
def test_the_board_locks_the_replays_until_the_player_has_played(
    site, make_player, submit, language
) -> None:
    leader = submit(make_player("alice"), WIN_LOG)
    bob = make_player("bob")
    text = lock_text(language)
    assert language == "en" or text != LOCK_TEXT, "the lock's words are translated"

    board = site("/leaderboard/", language=language, player=bob, width=320)
    expect(board.locator("#replays-locked")).to_have_text(text)
    # The live snapshot has replaced the server's rows: the entry is there, its replay is not.
    expect(board.locator("[data-board] tbody tr[data-player=alice]")).to_be_visible()
    expect(board.locator("[data-board] .locked").first).to_have_attribute("title", text)
    expect(board.locator(f'[data-board] a[href="/replays/{leader.pk}/"]')).to_have_count(0)
    no_sideways_scroll(board)
    shot(board, f"board-replays-locked-320-{language}")

    replay = site(f"/replays/{leader.pk}/", language=language, player=bob)
    expect(replay.locator("#replay-locked")).to_have_text(text)
    expect(replay.locator("#table")).to_have_count(0)
    shot(replay, f"replay-locked-{language}")

    submit(bob, WIN_LOG[:20])  # bob gives up after 20 actions: he has played the day

    board.reload()
    expect(board.locator("[data-board] tbody tr[data-player=bob]")).to_be_visible()
    expect(board.locator("#replays-locked")).to_have_count(0)
    link = board.locator(f'[data-board] a[href="/replays/{leader.pk}/"]')
    expect(link).to_be_visible()
    shot(board, f"board-replays-open-320-{language}")
    link.click()
    expect(board.locator("#table .card").first).to_be_visible()
    assert board.errors == []


def test_a_visitor_on_a_desktop_sees_the_lock_on_the_home_page_s_board(
    site, make_player, submit
) -> None:
    leader = submit(make_player("alice"), WIN_LOG)

    home = site("/")

    expect(home.locator("#replays-locked")).to_have_text(LOCK_TEXT)
    expect(home.locator("[data-board] tbody tr[data-player=alice] .locked")).to_be_visible()
    expect(home.locator(f'a[href="/replays/{leader.pk}/"]')).to_have_count(0)
    shot(home, "home-replays-locked-desktop")


def test_a_visitor_is_offered_no_hint_of_the_day_s_deal_and_the_api_refuses_one(site) -> None:
    page = site("/play/", width=320)

    # The day's deal is not on the table for a visitor: no hint button to press.
    assert page.locator("#hint").is_hidden()
    asked = page.evaluate(
        """async (deal) => {
            const answer = await fetch("/api/hint/", {
                method: "POST",
                headers: {"Content-Type": "application/json", Accept: "application/json"},
                body: JSON.stringify({deal, log: ""}),
            });
            return answer.status;
        }""",
        DEAL,
    )

    assert asked == 403
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
    shot(page, "play-visitor-320")
