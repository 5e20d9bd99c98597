"""Watching a player's ranked attempt live, in a real browser.

A player who has finished their own ranked game of the day opens another
player's live page: while the game is open, its progress (cards on the
foundations, score, moves) follows the player's actions as they are stored,
never its table; the table shows once the game is submitted, and to the player
themselves. The player sees how many watch. A player who has not finished
theirs gets the no-spoiler refusal instead.
"""

from __future__ import annotations

from typing import Any

import pytest

from games.models import Game
from tests.fixtures import WIN_LOG
from tests.web.conftest import shot
from tests.web.test_browser import play_keys, start_ranked

pytestmark = [pytest.mark.browser, pytest.mark.postgres]


def moves_shown(page: Any) -> int:
    return int(page.inner_text("#moves"))


def playing(site: Any, player: Any, actions: int) -> Any:
    """`player`'s play page once the first `actions` actions of their ranked game
    are stored."""
    page = site("/play/", player=player, service_workers="block")
    page.wait_for_selector('#attempt[data-mode="none"]', state="attached")
    start_ranked(page)
    play_keys(page, " ".join(WIN_LOG[:actions]))
    page.wait_for_selector(f'#attempt[data-stored="{actions}"]', state="attached")
    return page


def bob_watches_alice_play(
    site: Any, make_player: Any, submit: Any, actions: int
) -> tuple[Any, Any, Any, Any]:
    """bob has played the day and watches alice's ranked game live once she has
    stored `actions` actions: (alice, bob, her play page, his live page)."""
    alice, bob = make_player("alice"), make_player("bob")
    submit(bob, "S")
    player = playing(site, alice, actions)
    watcher = site("/live/alice/", player=bob)
    watcher.wait_for_selector('#watch-state[data-state="live"]')
    return alice, bob, player, watcher


def test_a_watcher_sees_the_progress_move_never_the_table_and_the_player_sees_the_watcher(
    site: Any, make_player: Any, submit: Any
) -> None:
    alice, bob = make_player("alice"), make_player("bob")
    submit(bob, "S")  # bob has played the day
    player = playing(site, alice, 5)

    # The player's page leads there.
    watcher = site("/players/alice/", player=bob)
    watcher.click("#watch-live")
    watcher.wait_for_selector('#watch-state[data-state="live"]')
    watcher.wait_for_function("() => document.getElementById('moves').textContent === '5'")
    player.wait_for_selector("#attempt-watchers:not([hidden])")
    assert player.inner_text("#attempt-watchers") == "1 player is watching live."

    play_keys(player, " ".join(WIN_LOG[5:12]))
    watcher.wait_for_function("() => document.getElementById('moves').textContent === '12'")
    assert watcher.locator("#watch-progress").is_visible()
    assert watcher.locator("#table").is_hidden()
    assert watcher.locator("#table .card").count() == 0, "no card of an open game is drawn"
    assert watcher.inner_text("#watch-deal") == ""
    assert watcher.inner_text("#watch-foundations-count").endswith(
        "of 104 cards on the foundations"
    )
    assert "copy it move by move" in watcher.inner_text("#watch-progress")
    assert watcher.errors == [] and player.errors == []
    shot(watcher, "watch-live")

    watcher.close()
    player.wait_for_selector("#attempt-watchers", state="hidden")


def test_the_player_watching_their_own_game_sees_its_table_move(
    site: Any, make_player: Any
) -> None:
    alice = make_player("alice")
    player = playing(site, alice, 4)

    own = site("/live/alice/", player=alice)
    own.wait_for_selector('#watch-state[data-state="live"]')
    own.wait_for_function("() => document.getElementById('moves').textContent === '4'")
    play_keys(player, " ".join(WIN_LOG[4:8]))
    own.wait_for_function("() => document.getElementById('moves').textContent === '8'")
    assert own.locator("#table .card").count() > 0
    assert own.locator("#watch-progress").is_hidden()
    assert own.errors == [] and player.errors == []


def test_a_live_page_opened_before_the_player_starts_goes_live_when_they_do(
    site: Any, make_player: Any, submit: Any
) -> None:
    alice, bob = make_player("alice"), make_player("bob")
    submit(bob, "S")  # bob has played the day
    watcher = site("/live/alice/", player=bob)
    watcher.wait_for_function(
        "() => document.getElementById('watch-message').textContent"
        " === 'This player has no ranked game today.'"
    )

    player = playing(site, alice, 4)

    watcher.wait_for_selector('#watch-state[data-state="live"]')
    watcher.wait_for_function("() => document.getElementById('moves').textContent === '4'")
    assert watcher.inner_text("#watch-message") == ""
    assert watcher.errors == [] and player.errors == []


def test_a_hint_asked_while_watched_shows_the_watchers_the_game_is_assisted(
    site: Any, make_player: Any, submit: Any
) -> None:
    _, _, player, watcher = bob_watches_alice_play(site, make_player, submit, 3)
    assert watcher.locator("#watch-assisted").is_hidden()

    player.click("#hint")
    player.click("#confirm-ok")

    watcher.wait_for_selector("#watch-assisted", state="visible")
    assert "a hint was used" in watcher.inner_text("#watch-assisted")
    assert watcher.errors == [] and player.errors == []


def test_the_live_page_says_the_game_is_over_and_links_its_replay(
    site: Any, make_player: Any, submit: Any
) -> None:
    alice, bob, player, watcher = bob_watches_alice_play(site, make_player, submit, 4)

    player.click("#submit-game")
    player.click("#confirm-ok")  # giving up: the game is not won

    watcher.wait_for_selector('#watch-state[data-state="over"]')
    game = Game.objects.get(player=alice, ranked=True)
    assert watcher.inner_text("#watch-state") == "Finished"
    assert watcher.inner_text("h1") == "alice's ranked game"  # no longer ", live"
    assert watcher.inner_text("#watch-message").startswith("This ranked game is over.")
    assert watcher.get_attribute("#watch-replay", "href") == f"/replays/{game.pk}/"
    # Finished, the game shows its table.
    watcher.wait_for_selector("#table .card")
    assert watcher.locator("#watch-progress").is_hidden()
    shot(watcher, "watch-over")

    # Opened later, in Spanish, the page knows it from the first snapshot.
    later = site("/live/alice/", player=bob, language="es")
    later.wait_for_selector('#watch-state[data-state="over"]')
    assert later.inner_text("#watch-state") == "Terminada"
    assert later.inner_text("h1") == "Partida clasificatoria de alice"
    assert later.inner_text("#watch-replay") == "Ver la repetición"
    later.click("#watch-replay")
    later.wait_for_selector("#step-label")
    assert later.url.endswith(f"/replays/{game.pk}/")
    assert watcher.errors == [] and player.errors == [] and later.errors == []


def test_a_player_who_has_not_played_the_day_is_refused(site: Any, make_player: Any) -> None:
    make_player("alice")
    carol = make_player("carol")

    page = site("/play/", player=carol)
    response = page.goto(page.url.replace("/play/", "/live/alice/"))

    assert response is not None and response.status == 403
    assert "once you have played your own ranked game of today" in page.inner_text("#watch-refused")
    assert page.locator("#table").count() == 0
    page.goto(page.url.replace("/live/alice/", "/players/alice/"))
    assert page.locator("#watch-live").count() == 0


@pytest.mark.parametrize("language", ["es", "nl"])
def test_the_live_page_speaks_the_viewers_language_on_a_phone(
    site: Any, make_player: Any, submit: Any, language: str
) -> None:
    alice, viewer = make_player("alice"), make_player(f"viewer-{language}")
    submit(viewer, "S")
    playing(site, alice, 3)

    page = site("/live/alice/", player=viewer, language=language, width=320)
    page.wait_for_selector('#watch-state[data-state="live"]')
    page.wait_for_function("() => document.getElementById('moves').textContent === '3'")

    assert page.inner_text("#watch-state") == {"es": "En directo", "nl": "Live"}[language]
    assert page.inner_text("#watch-foundations-count").endswith(
        {"es": "de 104 cartas en las fundaciones", "nl": "van de 104 kaarten op de fundamenten"}[
            language
        ]
    )
    assert {"es": "jugada a jugada", "nl": "zet voor zet"}[language] in page.inner_text(
        "#watch-progress"
    )
    assert page.locator("#table .card").count() == 0
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 320
    shot(page, f"watch-live-320-{language}")
