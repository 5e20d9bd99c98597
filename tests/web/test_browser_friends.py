"""Friends in a real browser: finding a player by name and following them on the friends
page (with JavaScript and without), the friends board's friends who have not played
yet and who used a hint, and the Copy button of a league's invite link.

The same uvicorn and Chromium as `test_browser.py`; screenshots go to tests/artifacts/.
"""

from __future__ import annotations

from typing import Any

import pytest

from leagues import services
from leagues.models import Follow
from tests.fixtures import WIN_LOG, play_assisted
from tests.web.conftest import shot
from tests.web.test_browser_leagues import in_a_thread

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

# The follow buttons' words in each language.
FOLLOW = {"en": "Follow", "es": "Seguir", "nl": "Volgen"}
UNFOLLOW = {"en": "Unfollow", "es": "Dejar de seguir", "nl": "Ontvolgen"}


def find_and_follow(page: Any, language: str, width: int) -> None:
    """On the friends page: search "bo", follow bob from the results, and see him in
    the list of players followed."""
    page.fill("#search-name", "bo")
    page.press("#search-name", "Enter")
    result = page.locator('#search-results li[data-player="bob"]')
    result.wait_for()
    assert page.locator("#search-results li").count() == 2  # bob and bobby
    assert result.locator("button").inner_text() == FOLLOW[language]
    shot(page, f"friends-search-{language}-{width}")

    result.locator("button").click()
    followed = page.locator('#following li[data-player="bob"]')
    followed.wait_for()
    # Back on the same search, bob's button now stops following him.
    assert page.input_value("#search-name") == "bo"
    assert result.locator("button").inner_text() == UNFOLLOW[language]
    assert followed.locator("button").inner_text() == UNFOLLOW[language]
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shot(page, f"friends-followed-{language}-{width}")


@pytest.mark.parametrize("language", ["en", "es", "nl"])
def test_a_player_finds_a_friend_by_name_follows_them_and_sees_them_listed(
    site, make_player, language
) -> None:
    make_player("bob"), make_player("bobby"), make_player("carol")
    for width, height in ((320, 700), (1280, 900)):
        player = make_player(f"alice{width}")
        page = site("/friends/", language=language, width=width, height=height, player=player)
        find_and_follow(page, language, width)
        assert Follow.objects.filter(follower=player, followee__username="bob").exists()
        assert page.errors == []


def test_the_friends_page_works_without_javascript(site, make_player) -> None:
    alice = make_player("alice")
    make_player("bob"), make_player("bobby")
    page = site("/friends/", player=alice, javascript=False)
    # No script ran: the language switch has its button (pages with scripts have none).
    assert page.locator("#language-go").is_visible()

    find_and_follow(page, "en", 1280)
    page.locator('#following li[data-player="bob"] button').click()

    page.wait_for_selector('#search-results li[data-player="bob"] button:text-is("Follow")')
    assert page.locator('#following li[data-player="bob"]').count() == 0
    assert not Follow.objects.exists()


def test_the_friends_board_lists_who_has_not_played_and_who_used_a_hint(
    site, make_player, submit
) -> None:
    alice, bob, carol = make_player("alice"), make_player("bob"), make_player("carol")
    for friend in (bob, carol):
        services.follow_add(follower=alice, followee=friend)
    play_assisted(carol, ["S", "S"])
    page = site("/leaderboard/?scope=friends", width=320, height=700, player=alice)
    page.wait_for_selector('[data-live-state][data-state="live"]')
    assisted = page.locator('#friends-assisted tr[data-player="carol"]')
    assert "assisted: on no board" in assisted.inner_text()
    assert page.inner_text("#friends-not-played") == "Not played yet: bob"
    shot(page, "friends-board-not-played-320")

    # Bob plays: his row arrives live, and he leaves the list of who has not played.
    in_a_thread(submit, bob, WIN_LOG)
    page.wait_for_selector('table.board tbody tr[data-player="bob"]')
    page.wait_for_selector("#friends-not-played", state="hidden")
    assert page.locator("#friends-not-played [data-player]").count() == 0
    assert page.errors == []


def test_the_copy_button_copies_the_invite_link_and_says_so(site, make_player) -> None:
    alice = make_player("alice")
    league = services.league_create(owner=alice, name="Friday club")
    page = site(f"/leagues/{league.slug}/", width=320, height=700, player=alice)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    button = page.locator("#copy-invite")
    button.wait_for()  # shown by the script
    link = page.input_value("#invite-link")
    assert link.endswith(f"/leagues/join/{league.invite_code}/")

    button.click()

    page.wait_for_function(
        "() => document.getElementById('copy-state').textContent === 'Copied to the clipboard.'"
    )
    assert page.get_attribute("#copy-state", "role") == "status"
    assert page.evaluate("navigator.clipboard.readText()") == link
    shot(page, "league-invite-copied-320")
    assert page.errors == []


def test_where_the_clipboard_refuses_the_button_selects_the_link(site, make_player) -> None:
    alice = make_player("alice")
    league = services.league_create(owner=alice, name="Friday club")
    page = site(f"/leagues/{league.slug}/", language="es", player=alice)
    page.locator("#copy-invite").wait_for()
    page.evaluate(
        "() => { navigator.clipboard.writeText = () => Promise.reject(new Error('refused')); }"
    )

    page.click("#copy-invite")

    page.wait_for_function(
        "() => document.getElementById('copy-state').textContent.startsWith('Seleccionado')"
    )
    selected = page.evaluate(
        """() => { const field = document.getElementById('invite-link');
            return [field.selectionStart, field.selectionEnd, field.value.length,
                    document.activeElement === field]; }"""
    )
    length = len(page.input_value("#invite-link"))
    assert selected == [0, length, length, True]
