"""The play and replay pages as a keyboard or screen-reader user meets them,
the settings, the cards in each language, and the small things a finished
game gets right (plural forms, sign-up next to log-in)."""

from __future__ import annotations

from typing import Any

import pytest

from games.models import DailyDeal, Game
from tests.fixtures import DEAL, WIN, WIN_LOG

from .conftest import DEAL_1, SHOWN_TIMES, SPOKEN_TIMES, fill_log_in, shot
from .test_layout import axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.postgres]


def keys_of(token: str) -> list[str]:
    """The keys that play a log token: "WF1" is W then F (the first foundation that
    takes the card), "52" is 5 then 2, "S" is S."""
    token = token.upper()
    if token == "S":
        return ["s"]
    source, target = token[0], token[1]
    return [source.lower(), target.lower()]


def focus_ring(page: Any) -> str:
    return page.evaluate(
        "() => { const s = getComputedStyle(document.activeElement); "
        "return s.outlineStyle + ' ' + s.outlineWidth; }"
    )


def test_the_keyboard_alone_wins_the_deal_with_a_visible_focus_and_spoken_moves(
    site, today
) -> None:
    # Deal 4 as another day's deal: a visitor is shown no table of the day's.
    DailyDeal.objects.filter(date=today).update(number=1)
    page = site(f"/play/?deal={DEAL}", width=1366, height=900)
    # The first Tab offers to skip the header's links, and Enter goes to the page itself.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    assert page.locator(".skip-link").is_visible()
    page.keyboard.press("Enter")
    page.wait_for_function("document.activeElement.id === 'main'")
    # Tab reaches the controls, each with a visible focus ring, then the table.
    reached = []
    for _ in range(40):
        page.keyboard.press("Tab")
        reached.append(page.evaluate("document.activeElement.id"))
        if reached[-1] == "table":
            break
    assert "table" in reached and "hint" in reached
    assert focus_ring(page).startswith("solid 3px")

    for number, token in enumerate(WIN_LOG, start=1):
        for key in keys_of(token):
            page.keyboard.press(key)
        if number == 1:
            # The live region says what happened, in words (the log says "4F1").
            assert page.inner_text("#announce") == "A♠ from column 4 to foundation F1"
    page.wait_for_selector("#table.won")
    assert int(page.inner_text("#score")) == WIN["score"]
    assert int(page.inner_text("#moves")) == WIN["moves"]
    # The table says "Won!"; screen readers hear it with the last move.
    assert page.inner_text("#announce").endswith(". Won!")
    # Signed out, the winner is offered both ways in.
    page.wait_for_selector("#sign-in-to-submit")
    assert (
        page.locator("#sign-up-to-submit")
        .get_attribute("href")
        .startswith("/accounts/signup/?next=")
    )
    shot(page, "play-won-by-keyboard")


def test_a_won_practice_game_says_won_once_and_for_as_long_as_it_stands(
    site, make_player, submit
) -> None:
    alice = make_player("alice")
    submit(alice, WIN_LOG[:12])  # her ranked game of the day is played: this one is practice
    page = site("/play/", player=alice)
    page.wait_for_function("() => window.easyHarp.attempt.mode === 'done'")
    page.fill("#action-input", " ".join(WIN_LOG))
    page.press("#action-input", "Enter")
    celebrating = page.wait_for_function(
        f"() => document.querySelector('#table.celebrate') && ({SHOWN_TIMES})('Won!')"
    )
    assert celebrating.json_value() == 1
    page.wait_for_selector("#result-kind[data-kind='practice']")
    # Once the celebration is over, the table still says it, and nothing else does.
    page.wait_for_selector("#table.won:not(.celebrate)")
    assert page.evaluate(SHOWN_TIMES, "Won!") == 1
    assert page.evaluate(SPOKEN_TIMES, "Won!") == 1
    shot(page, "play-practice-won")
    page.reload()
    page.wait_for_selector("#replay-link")
    assert page.evaluate(SHOWN_TIMES, "Won!") == 1


def test_a_refusal_is_announced_and_cards_have_names_with_their_place(site) -> None:
    page = site(f"/play/?deal={DEAL_1}")
    card = page.locator('.column[data-place="c4"] .card.up').last
    assert card.get_attribute("aria-label") == "8 of hearts, column 5"
    assert page.locator('[data-place="s"]').get_attribute("aria-label") == "Stock: 59"
    page.keyboard.press("1")
    page.keyboard.press("f")  # 6D: no foundation takes it
    page.wait_for_function("() => document.getElementById('message').textContent !== ''")
    assert page.get_attribute("#message", "role") == "status"
    assert page.inner_text("#message") == "No foundation accepts 6♦."


@pytest.mark.parametrize(
    ("language", "jack", "name"),
    [("en", "J♣", "jack of clubs, column 9"), ("nl", "B♣", "klaveren boer, kolom 9")],
)
def test_cards_show_the_rank_letters_of_the_players_language(
    site, language: str, jack: str, name: str
) -> None:
    page = site(f"/play/?deal={DEAL_1}", language=language)
    card = page.locator('.column[data-place="c8"] .card.up').last
    assert card.locator(".corner").inner_text() == jack
    assert card.get_attribute("aria-label") == name
    # A face card shows a figure and its monogram.
    assert card.locator(".figure").inner_text() == "♞"
    assert card.locator(".monogram").inner_text() == jack


def test_double_click_off_plays_a_tap_at_once_and_four_colours_are_remembered(site) -> None:
    page = site(f"/play/?deal={DEAL_1}")
    page.click("#settings summary")
    page.uncheck("#setting-double-click")
    page.check("#setting-four-colour")
    page.select_option("#setting-card-style", "large")
    page.reload()
    assert page.evaluate("document.documentElement.classList.contains('four-colour')")
    assert page.evaluate("document.documentElement.dataset.cardStyle") == "large"
    assert not page.locator("#setting-double-click").is_checked()
    diamond = page.locator(".card.suit-diamonds .corner").first
    heart = page.locator(".card.suit-hearts .corner").first
    assert diamond.evaluate("n => getComputedStyle(n).color") != heart.evaluate(
        "n => getComputedStyle(n).color"
    )
    # Without double click, a tap answers at once: the refusal is there before
    # any double-tap wait could have ended (the clock is held still).
    page.clock.install()
    page.locator('.column[data-place="c0"] .card.up').last.click()
    page.wait_for_function("() => document.getElementById('message').textContent !== ''")
    assert page.inner_text("#message") == "No foundation accepts 6♦."
    shot(page, "play-four-colour")


def test_a_replay_marks_and_writes_out_each_action_and_plays_at_the_players_pace(
    site, make_player, submit
) -> None:
    game = submit(make_player("carol"), WIN_LOG)
    page = site(f"/replays/{game.pk}/", player=game.player)  # her own: the day still runs
    page.wait_for_function("() => document.getElementById('table').dataset.step === '0'")
    assert page.locator("#speed option[value=real]").is_hidden()
    page.click("#forward")
    page.wait_for_function("() => document.getElementById('table').dataset.step === '1'")
    assert page.inner_text("#step-label").endswith(": A♠ from column 4 to foundation F1 (4F1)")
    assert page.locator("#table .foundation .card.moved").get_attribute("data-card") == "AS"

    stock = WIN_LOG.index("S")
    page.fill("#jump", str(stock + 1))
    page.press("#jump", "Enter")
    assert page.inner_text("#step-label").endswith("turned up from the stock (S)")
    assert page.locator("#table .slot.waste .card.moved").count() == 1

    # The first move between columns: its card ringed, the column it left dashed.
    index = next(i for i, token in enumerate(WIN_LOG) if token.isdigit())
    page.fill("#jump", str(index + 1))
    page.press("#jump", "Enter")
    token = WIN_LOG[index]
    label = page.inner_text("#step-label")
    assert f" from column {token[0]} to column {token[1]} ({token})" in label
    moved = page.locator("#table .card.moved")
    assert moved.count() >= 1
    assert moved.last.get_attribute("data-place") == f"c{int(token[1]) - 1}"
    assert page.locator(f'.column.moved-from[data-place="c{int(token[0]) - 1}"]').count() == 1
    shot(page, "replay-marked")

    # A game that carries its times offers to play at the speed it was played.
    Game.objects.filter(pk=game.pk).update(times=[i * 10 for i in range(len(WIN_LOG))])
    page.reload()
    page.wait_for_function("() => document.getElementById('table').dataset.step === '0'")
    assert page.input_value("#speed") == "real"
    page.click("#play-pause")
    page.wait_for_function("() => Number(document.getElementById('table').dataset.step) >= 3")
    page.click("#play-pause")


def test_results_use_plural_forms(site, make_player, submit) -> None:
    page = site(f"/play/?deal={DEAL_1}")
    assert page.evaluate("() => window.easyHarp !== undefined")
    one = page.evaluate(
        "async () => (await import('/static/games/ui.js')).t('result', {score: 5, moves: 1})"
    )
    many = page.evaluate(
        "async () => (await import('/static/games/ui.js')).t('result', {score: 5, moves: 5})"
    )
    assert (one, many) == ("Your result: score 5, 1 move.", "Your result: score 5, 5 moves.")


def test_sign_up_errors_read_as_errors(site, make_player) -> None:
    make_player("alice")
    page = site("/accounts/signup/", width=390, height=800)
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password1]", "a-long-passphrase")
    page.fill("input[name=password2]", "another-passphrase")
    page.click("form.account-form button[type=submit]")
    errors = page.locator(".errorlist").first
    errors.wait_for()
    assert errors.evaluate("n => getComputedStyle(n).color") == "rgb(200, 16, 46)"
    help_text = page.locator(".helptext").first
    assert help_text.evaluate("n => getComputedStyle(n).color") != "rgb(200, 16, 46)"
    shot(page, "signup-errors-phone")


def test_a_signed_in_players_settings_follow_them_to_another_browser(site, make_player) -> None:
    make_player("alice")
    first = site("/accounts/login/?next=/play/")
    with first.expect_navigation():
        fill_log_in(first, "alice")
    first.click("#settings summary")
    with first.expect_response("**/api/auth/settings/"):
        first.check("#setting-four-colour")
    other = site("/accounts/login/?next=/play/")
    with other.expect_navigation():
        fill_log_in(other, "alice")
    other.wait_for_function("() => document.documentElement.classList.contains('four-colour')")
    assert other.locator("#setting-four-colour").is_checked()


def step_is(page: Any, index: int) -> None:
    page.wait_for_function(f"() => document.getElementById('table').dataset.step === '{index}'")


@pytest.mark.parametrize(("width", "height", "name"), [(320, 640, "320"), (1366, 900, "desktop")])
def test_a_replay_is_studied_from_the_keyboard_and_says_whose_game_of_which_day_it_was(
    site, make_player, submit, today, width: int, height: int, name: str
) -> None:
    submit(make_player("bob"), WIN_LOG)
    game = submit(make_player("carol"), WIN_LOG[:60])  # not won: below bob's win
    Game.objects.filter(pk=game.pk).update(duration_ms=(6 * 60 + 5) * 1000)
    page = site(f"/replays/{game.pk}/", player=game.player, width=width, height=height)
    step_is(page, 0)
    assert page.inner_text("#fact-player") == "carol"
    assert page.inner_text("#fact-date") == today.isoformat()
    assert page.get_attribute("#fact-kind", "data-kind") == "ranked"
    assert page.inner_text("#fact-kind") == "Ranked"
    assert page.inner_text("#fact-rank").split() == ["2", "of", "2", "so", "far"]
    assert page.inner_text("#fact-time") == "6:05"

    last = 60
    page.keyboard.press("ArrowRight")
    step_is(page, 1)
    assert page.inner_text("#step-label").endswith("(4F1)")
    page.keyboard.press("ArrowRight")
    step_is(page, 2)
    page.keyboard.press("ArrowLeft")
    step_is(page, 1)
    page.keyboard.press("End")
    step_is(page, last)
    assert page.inner_text("#step-label").startswith(f"Action {last} of {last}")
    assert int(page.inner_text("#score")) == game.score
    page.keyboard.press("Home")
    step_is(page, 0)
    assert page.inner_text("#step-label") == "Deal"
    # A screen reader hears the deal again, not the last action it heard.
    assert page.inner_text("#announce") == "Deal"
    # After a click the button keeps the focus, and the keys still step.
    page.click("#forward")
    step_is(page, 1)
    page.keyboard.press("ArrowRight")
    step_is(page, 2)
    for _ in range(10):
        page.keyboard.press("ArrowRight")
    step_is(page, 12)
    # The arrows step the replay; the page does not scroll sideways.
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
    assert axe_violations(page) == []
    shot(page, f"replay-keyboard-{name}")


def test_the_replays_facts_keep_their_words_whole_in_spanish(
    site: Any, make_player: Any, submit: Any
) -> None:
    # "Clasificatoria" was cut in two in a card of fixed width on a desktop.
    alice = make_player("alice")
    game = submit(alice, WIN_LOG)
    for width in (320, 1366):
        page = site(f"/replays/{game.pk}/", player=alice, language="es", width=width)
        kind = page.locator("#fact-kind")
        assert kind.inner_text() == "Clasificatoria"
        # One box per line the text takes.
        lines = kind.evaluate(
            "n => { const r = document.createRange(); r.selectNodeContents(n);"
            " return r.getClientRects().length; }"
        )
        assert lines == 1, f"{lines} lines at {width} px"
