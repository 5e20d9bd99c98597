"""The pages in a real browser: headless Chromium driven by Playwright.

A uvicorn process with the production command line serves the whole ASGI
application (pages, API, websocket) on a free loopback port against the test
database; every test plays with real clicks, drags and keys, and saves
screenshots under tests/artifacts/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.utils import translation
from django.utils.translation import gettext

from games.models import DailyDeal, Game
from games.rules import REASONS
from tests.fixtures import WIN, WIN_LOG
from tests.games.replays import engine_tables

from .conftest import DEAL_1, SPOKEN_TIMES, WAIT_MS, fill_log_in, shot

pytestmark = [pytest.mark.browser, pytest.mark.postgres]


def counters(page: Any) -> tuple[int, int]:
    return int(page.inner_text("#score")), int(page.inner_text("#moves"))


def engine(page: Any, expression: str) -> Any:
    """Ask the page's engine (window.easyHarp.game) a question."""
    return page.evaluate(f"() => {{ const game = window.easyHarp.game; return {expression}; }}")


def shown_columns(page: Any) -> list[list[str]]:
    """The face-up cards of every column as the page draws them, bottom to top."""
    return page.evaluate(
        """() => [...document.querySelectorAll("#table .column")].map((column) =>
            [...column.querySelectorAll(".card.up")].map((card) => card.dataset.card))"""
    )


def top_card(page: Any, column: int) -> Any:
    return page.locator(f'.column[data-place="c{column}"] .card.up').last


def column_cards(page: Any, column: int) -> list[str]:
    return page.locator(f'.column[data-place="c{column}"] .card.up').evaluate_all(
        "nodes => nodes.map(n => n.dataset.card)"
    )


def drag(page: Any, source: Any, target: Any) -> None:
    """A real pointer drag from the middle of `source`'s visible part to `target`."""
    box = source.bounding_box()
    goal = target.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 8)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2 + 10, box["y"] + 20, steps=3)
    page.mouse.move(goal["x"] + goal["width"] / 2, goal["y"] + goal["height"] / 2, steps=10)
    page.mouse.up()


def play_keys(page: Any, log: str) -> None:
    """Feed actions through the keyboard form, as a player typing them would; returns
    once the page has played them all."""
    page.fill("#action-input", log)
    page.press("#action-input", "Enter")


def log_in(page: Any, username: str) -> None:
    page.click("#login-link")
    fill_log_in(page, username)


def start_ranked(page: Any) -> None:
    """Press the start step's button and wait until today's ranked game is open (its
    table shown): nothing else starts it."""
    page.click("#start-ranked")
    page.wait_for_selector('#attempt[data-mode="open"]', state="attached")
    page.wait_for_selector("#table:visible")


def test_moves_by_click_and_drag_change_score_and_moves_and_undo_takes_them_back(site) -> None:
    page = site(f"/play/?deal={DEAL_1}")
    assert counters(page) == (0, 0)
    assert column_cards(page, 0) == ["6D"]

    page.click('[data-place="s"]')
    page.wait_for_function("() => document.getElementById('moves').textContent === '1'")
    assert page.locator(".slot.waste .card").get_attribute("data-card") == engine(
        page, "game.table().waste_top"
    )

    # 8H (column 5) dragged onto 9S (column 2): the face-down card under it turns up, +5.
    drag(page, top_card(page, 4), top_card(page, 1))
    page.wait_for_function("() => document.getElementById('moves').textContent === '2'")
    assert column_cards(page, 1) == ["9S", "8H"]
    assert counters(page) == (5, 2)
    shot(page, "play-after-drag")

    page.click("#undo")
    page.wait_for_function("() => document.getElementById('score').textContent === '0'")
    assert column_cards(page, 1) == ["9S"]
    assert counters(page) == (0, 2)  # undo takes back the points, never the move

    # A tap on a top card sends it to a foundation when one takes it; a double
    # tap finds it a column. 4H (column 3) double-tapped goes onto 5C (column 4).
    top_card(page, 2).dblclick()
    page.wait_for_function("() => document.getElementById('moves').textContent === '3'")
    assert column_cards(page, 3) == ["5C", "4H"]
    assert counters(page)[0] == 5

    # A tap on a card no foundation takes says why.
    top_card(page, 0).click()
    page.wait_for_function("() => document.getElementById('message').textContent !== ''")
    assert page.inner_text("#message") == "No foundation accepts 6♦."
    assert page.errors == []


def test_dragging_a_run_shows_the_one_card_reminder_unless_switched_off(site) -> None:
    page = site(f"/play/?deal={DEAL_1}")
    play_keys(page, "34")  # column 4 now ends 5C 4H
    page.wait_for_function("() => document.getElementById('moves').textContent === '1'")
    run_base = page.locator('.column[data-place="c3"] .card.up').first
    assert run_base.get_attribute("data-card") == "5C"

    # 5C would fit on 6D, but it carries 4H: only the top card moves.
    drag(page, run_base, top_card(page, 0))
    page.wait_for_selector("#reminder:not([hidden])")
    assert "One card at a time" in page.inner_text("#reminder")
    assert counters(page) == (5, 1)
    assert column_cards(page, 0) == ["6D"]
    shot(page, "play-one-card-reminder")

    page.click("#reminder-close")
    page.uncheck("#interactive-rules")
    drag(page, run_base, top_card(page, 0))
    page.wait_for_timeout(300)
    assert page.locator("#reminder").is_hidden()
    assert counters(page) == (5, 1)


def test_a_refused_run_drag_says_why_once(site) -> None:
    page = site(f"/play/?deal={DEAL_1}")
    play_keys(page, "34")  # column 4 now ends 5C 4H
    page.wait_for_function("() => document.getElementById('moves').textContent === '1'")
    # 4H slides onto 5C: pressed while it slides, 4H would be the card dragged.
    page.wait_for_function("() => document.getAnimations().length === 0")
    run_base = page.locator('.column[data-place="c3"] .card.up').first
    rule = "run moves as a block only when it starts with a king"

    # The reminder is the refusal: the status line does not say it again.
    drag(page, run_base, top_card(page, 0))
    page.wait_for_selector("#reminder:not([hidden])")
    assert page.inner_text("#message") == ""
    assert page.evaluate(SPOKEN_TIMES, rule) == 1

    # Without the reminder, the status line says it.
    page.click("#reminder-close")
    page.uncheck("#interactive-rules")
    drag(page, run_base, top_card(page, 0))
    page.wait_for_function("() => document.getElementById('message').textContent !== ''")
    assert page.inner_text("#message") == f"{REASONS['one_card_at_a_time'].capitalize()}."
    assert page.locator("#reminder").is_hidden()
    assert page.evaluate(SPOKEN_TIMES, rule) == 1


def test_a_game_survives_a_reload(site) -> None:
    page = site(f"/play/?deal={DEAL_1}")
    play_keys(page, "S S 52 34")
    page.wait_for_function("() => document.getElementById('moves').textContent === '4'")
    before = engine(page, "game.table()")
    page.reload()
    page.wait_for_function("() => document.getElementById('moves').textContent === '4'")
    assert engine(page, "game.table()") == before
    assert column_cards(page, 1) == ["9S", "8H"]
    assert page.inner_text("#undo-left") == "4"


def test_the_keyboard_plays_too(site) -> None:
    page = site(f"/play/?deal={DEAL_1}")
    page.keyboard.press("s")
    page.keyboard.press("5")
    assert "selected" in (top_card(page, 4).get_attribute("class") or "")
    page.keyboard.press("2")
    page.wait_for_function("() => document.getElementById('moves').textContent === '2'")
    assert column_cards(page, 1) == ["9S", "8H"]
    page.keyboard.press("u")
    page.wait_for_function("() => document.getElementById('score').textContent === '0'")
    assert column_cards(page, 1) == ["9S"]


def test_the_keyboard_brings_a_card_down_from_a_foundation(site, today) -> None:
    # The won game's first action puts an ace up (4F: the first foundation
    # that takes it); F, the foundation's number and a column bring it down.
    # Its deal as another day's: a visitor is shown no table of the day's.
    DailyDeal.objects.filter(date=today).update(number=1)
    page = site(f"/play/?deal={WIN['deal']}")
    ace = top_card(page, 3).get_attribute("data-card")
    page.keyboard.press("4")
    page.keyboard.press("f")
    page.wait_for_function("() => document.getElementById('moves').textContent === '1'")
    page.keyboard.press("f")
    page.keyboard.press("1")
    foundation_top = page.locator('.card.up[data-place="f0"]')
    assert foundation_top.get_attribute("data-card") == ace
    assert "selected" in (foundation_top.get_attribute("class") or "")
    page.keyboard.press("6")
    page.wait_for_function("() => document.getElementById('moves').textContent === '2'")
    assert column_cards(page, 5)[-1] == ace
    assert page.locator('.card.up[data-place="f0"]').count() == 0
    assert window_log(page) == ["4F", "F16"]


def window_log(page: Any) -> list[str]:
    return page.evaluate("() => window.easyHarp.game.log.map(String)")


def test_a_won_game_is_submitted_and_a_second_page_sees_the_live_board_move(
    site, make_player
) -> None:
    make_player("alice")
    watcher = site("/leaderboard/")
    watcher.wait_for_selector('[data-live-state][data-state="live"]')
    assert "Nobody has played" in watcher.inner_text("table.board tbody")
    home = site("/")
    home.wait_for_selector('[data-live-state][data-state="live"]')

    player = site("/play/")
    log_in(player, "alice")
    player.wait_for_url(re.compile(r"/play/"))
    start_ranked(player)
    play_keys(player, WIN["log"])
    player.wait_for_selector("#my-rank")
    assert player.inner_text("#score") == str(WIN["score"])
    assert f"score {WIN['score']}, {WIN['moves']} moves" in player.inner_text("#result")
    assert "Rank 1 of 1" in player.inner_text("#my-rank")
    # The start step started the ranked attempt: the game is the ranked one.
    assert player.get_attribute("#result-kind", "data-kind") == "ranked"
    # Submitted automatically on the win: no second submission of the same game.
    assert player.locator("#submit-game").is_disabled()
    shot(player, "play-won")

    watcher.wait_for_selector('table.board tbody tr[data-player="alice"]')
    row = watcher.locator('table.board tbody tr[data-player="alice"]').inner_text()
    assert str(WIN["score"]) in row and str(WIN["moves"]) in row
    assert watcher.inner_text("[data-total]") == "1"
    shot(watcher, "leaderboard-live")
    # The home page's top 10 moves too.
    home.wait_for_selector('table.board tbody tr[data-player="alice"]')

    # Stored once, with the server's own results.
    game = Game.objects.get()
    assert (game.score, game.moves, game.won) == (WIN["score"], WIN["moves"], True)


def test_a_submission_whose_answer_is_lost_is_retried_with_the_same_key_and_stored_once(
    site, make_player
) -> None:
    make_player("alice")
    page = site("/play/", service_workers="block")
    log_in(page, "alice")
    page.wait_for_url(re.compile(r"/play/"))
    attempts: list[dict[str, str]] = []

    def lose_the_first_answer(route: Any) -> None:
        attempts.append(route.request.headers)
        if len(attempts) == 1:
            route.fetch()  # the server stores the game...
            route.abort("connectionreset")  # ...but its answer never arrives
        else:
            route.continue_()

    page.route("**/api/games/", lose_the_first_answer)
    start_ranked(page)
    play_keys(page, WIN["log"])
    page.wait_for_selector("#my-rank")
    assert len(attempts) == 2
    keys = {headers["idempotency-key"] for headers in attempts}
    assert len(keys) == 1 and len(keys.pop()) == 32
    assert Game.objects.count() == 1
    assert "Rank 1 of 1" in page.inner_text("#my-rank")

    # The player's own row is highlighted on the live board.
    page.goto(page.url.replace("/play/", "/leaderboard/"))
    page.wait_for_selector('tr.mine[data-player="alice"]')


def test_a_signed_out_player_signs_in_to_submit_without_losing_the_game(site, make_player) -> None:
    make_player("bob")
    # Another deal than the day's: a visitor is shown no table of the day's.
    page = site(f"/play/?deal={DEAL_1}")
    play_keys(page, " ".join(["S"] * 12))
    page.wait_for_function("() => document.getElementById('moves').textContent === '12'")
    before = engine(page, "game.table()")
    page.click("#submit-game")
    page.click("#confirm-ok")  # the game is not won: submit it anyway
    page.click("#sign-in-to-submit")
    fill_log_in(page, "bob")
    page.wait_for_selector("#replay-link")
    assert engine(page, "game.table()") == before
    # Another deal than the day's: practice.
    assert page.get_attribute("#result-kind", "data-kind") == "practice"
    game = Game.objects.get()
    assert game.player.username == "bob"
    assert game.moves == 12 and not game.won and not game.ranked


def test_a_replay_steps_through_the_game(site, make_player, submit) -> None:
    game = submit(make_player("carol"), WIN_LOG)
    # Her own replay: the day still runs, so it is locked for anyone who has not played.
    page = site(f"/replays/{game.pk}/", player=game.player)
    page.wait_for_function("() => document.getElementById('table').dataset.step === '0'")
    # What the page must show: the engine's tables (the page rebuilds them
    # from the replay's compact steps).
    tables = engine_tables(game.deal_code, game.log)

    page.click("#forward")
    page.wait_for_function("() => document.getElementById('table').dataset.step === '1'")
    assert page.inner_text("#step-label").endswith(f"({WIN_LOG[0].upper()})")
    assert counters(page) == (tables[1]["score"], tables[1]["moves"])

    page.fill("#jump", "200")
    page.press("#jump", "Enter")
    page.wait_for_function("() => document.getElementById('table').dataset.step === '200'")
    assert counters(page) == (tables[200]["score"], tables[200]["moves"])
    assert shown_columns(page) == [column["up"] for column in tables[200]["columns"]]
    waste = tables[200]["waste_top"]
    if waste:
        assert page.locator(".slot.waste .card").get_attribute("data-card") == waste

    page.click("#back")
    page.wait_for_function("() => document.getElementById('table').dataset.step === '199'")
    page.select_option("#speed", "40")
    page.click("#last")
    page.click("#play-pause")  # from the end, play restarts at the deal
    page.wait_for_function("() => Number(document.getElementById('table').dataset.step) >= 5")
    page.click("#play-pause")
    shot(page, "replay")
    page.click("#last")
    assert counters(page) == (WIN["score"], WIN["moves"])
    assert page.inner_text("#step-label").startswith(f"Action {len(WIN_LOG)} of {len(WIN_LOG)}")


@pytest.mark.parametrize(("language", "undo"), [("es", "Deshacer"), ("nl", "Ongedaan maken")])
def test_the_language_switch_translates_the_play_page_and_refusals(
    site, language: str, undo: str
) -> None:
    page = site(f"/play/?deal={DEAL_1}")
    assert "Undo" in page.inner_text("#undo")
    page.select_option("#language", language)
    page.wait_for_selector(f'html[lang="{language}"]')
    assert undo in page.inner_text("#undo")
    top_card(page, 0).click()  # 6D: no foundation takes it
    page.wait_for_function("() => document.getElementById('message').textContent !== ''")
    with translation.override(language):
        clause = gettext(REASONS["no_foundation_accepts"]).replace("{card}", "6♦")
    assert clause != REASONS["no_foundation_accepts"].replace("{card}", "6♦")  # translated
    assert page.inner_text("#message") == clause[0].upper() + clause[1:] + "."
    shot(page, f"play-{language}")


def test_the_play_page_fits_a_phone(site) -> None:
    page = site(f"/play/?deal={DEAL_1}", width=390, height=844)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    last = top_card(page, 8).bounding_box()
    assert last["x"] + last["width"] <= 390
    corner = page.locator('.column[data-place="c8"] .card.up .corner').first
    assert corner.inner_text() == "J♣"
    assert (
        page.evaluate(
            "parseFloat(getComputedStyle(document.querySelector('.card .corner')).fontSize)"
        )
        >= 11
    )
    red = page.locator(".card.red .corner").first.evaluate("n => getComputedStyle(n).color")
    black = page.locator(".card.black .corner").first.evaluate("n => getComputedStyle(n).color")
    assert red != black
    shot(page, "play-phone")


def test_every_page_fits_a_phone(site, make_player, submit) -> None:
    player = make_player("a-rather-long-player-name")
    game = submit(player, WIN_LOG)
    for path in [
        "/",
        "/leaderboard/",
        "/leaderboard/?order=moves",
        f"/replays/{game.pk}/",
        "/players/a-rather-long-player-name/",
        "/rules/",
        "/accounts/login/",
        "/accounts/signup/",
    ]:
        # The replay as its player sees it (a visitor finds it locked while the day runs).
        page = site(path, width=390, height=844, player=player if "/replays/" in path else None)
        page.wait_for_load_state("networkidle")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, path
        assert page.errors == [], path
    shot(page, "signup-phone")


def test_the_hint_names_and_points_at_a_move_that_one_click_plays(site) -> None:
    page = site(f"/play/?deal={DEAL_1}")
    play_keys(page, "S")
    page.wait_for_function("() => document.getElementById('moves').textContent === '1'")
    # Reachable by keyboard: the button takes the focus and Enter presses it.
    page.focus("#hint")
    with page.expect_response("**/api/hint/") as answer:
        page.keyboard.press("Enter")
    response = answer.value
    assert response.request.headers["x-csrftoken"]
    assert response.request.post_data_json == {"deal": DEAL_1, "log": "S"}
    hint = response.json()
    assert hint["result"] == "move", hint
    page.wait_for_selector('#hint-box[data-kind="move"]')
    text = page.inner_text("#hint-text")
    assert text.startswith("Hint: ") and f"{hint['moves_to_win']} moves away" in text
    assert page.locator("#table .hinted").count() == 1
    assert not page.locator("#hint").is_disabled()
    # Asking changes neither the game nor the score.
    assert counters(page) == (0, 1)
    assert engine(page, "game.log") == ["S"]
    shot(page, "play-hint")

    page.click("#hint-play")
    page.wait_for_function("() => document.getElementById('moves').textContent === '2'")
    assert engine(page, "game.log") == ["S", hint["action"]]
    assert page.locator("#hint-box").is_hidden()
    assert page.locator("#table .hinted, #table .hint-target").count() == 0


def test_a_move_hint_shows_the_card_and_where_it_goes(site) -> None:
    page = site(f"/play/?deal={DEAL_1}", service_workers="block")
    # The page's words for whatever the solver answers: 52 moves 8♥ onto 9♠.
    page.route(
        "**/api/hint/",
        lambda route: route.fulfill(
            json={"result": "move", "action": "52", "moves_to_win": 300, "seconds": 0.2}
        ),
    )
    page.click("#hint")
    page.wait_for_selector('#hint-box[data-kind="move"]')
    expected = "Hint: move 8♥ from column 5 to column 2. A win is 300 moves away."
    assert page.inner_text("#hint-text") == expected
    assert page.locator("#table .card.hinted").get_attribute("data-card") == "8H"
    assert page.locator("#table .hint-target").get_attribute("data-drop") == "c1"
    # Played by hand instead, the hint is done with.
    drag(page, top_card(page, 4), top_card(page, 1))
    page.wait_for_function("() => document.getElementById('moves').textContent === '1'")
    assert page.locator("#hint-box").is_hidden()


def test_a_lost_position_says_no_useful_move_left_and_errors_say_what_failed(site) -> None:
    page = site(f"/play/?deal={DEAL_1}", service_workers="block")
    # Building a proven-lost position takes the solver long; its answer is stood in for.
    answers: list[dict[str, Any]] = []
    replies: list[dict[str, Any]] = [
        {"json": {"result": "lost", "action": None, "moves_to_win": None, "seconds": 0.4}},
        {"json": {"result": "unknown", "action": None, "moves_to_win": None, "seconds": 2.0}},
        {"status": 429, "json": {"error": {"code": "throttled", "message": "Slow down."}}},
        {"status": 400, "json": {"error": {"code": "invalid_deal", "message": "Not a deal."}}},
    ]

    def answer(route: Any) -> None:
        answers.append(route.request.post_data_json)
        route.fulfill(**replies[len(answers) - 1])

    page.route("**/api/hint/", answer)
    play_keys(page, "34")
    page.wait_for_function("() => document.getElementById('moves').textContent === '1'")
    # The button is disabled while the request is in flight.
    assert page.evaluate(
        "() => { const b = document.getElementById('hint'); b.click(); return b.disabled; }"
    )
    page.wait_for_selector('#hint-box[data-kind="lost"]')
    assert page.inner_text("#hint-text").startswith("No useful move left")
    assert page.locator("#hint-play").is_hidden()
    assert page.locator("#table .hinted").count() == 0
    assert not page.locator("#hint").is_disabled()
    assert answers == [{"deal": DEAL_1, "log": "34"}]
    assert counters(page) == (5, 1)
    shot(page, "play-hint-lost")

    page.evaluate("document.activeElement.blur()")  # out of the keyboard form
    page.keyboard.press("h")  # the key asks too
    page.wait_for_function(
        "() => document.getElementById('hint-text').textContent.includes('ran out of time')"
    )
    page.click("#hint")
    page.wait_for_function(
        "() => document.getElementById('hint-text').textContent.startsWith('Too many hints')"
    )
    page.click("#hint")
    page.wait_for_selector('#hint-box[data-kind="error"]')
    # A refusal the page cannot have caused is said in the page's words, not the API's.
    page.wait_for_function(
        "() => document.getElementById('hint-text').textContent"
        ".startsWith('No hint could be given for this game')"
    )

    page.unroute("**/api/hint/")
    page.route("**/api/hint/", lambda route: route.abort("connectionreset"))
    page.click("#hint")
    page.wait_for_function(
        "() => document.getElementById('hint-text').textContent.startsWith('The hint could not')"
    )
    assert page.errors == []


def test_the_days_par_shows_with_the_board_and_fits_a_phone(site, today) -> None:
    page = site("/")
    assert page.locator("#par").count() == 0  # no par known yet: nothing shown
    DailyDeal.objects.filter(date=today).update(par=312)
    page.reload()
    assert page.inner_text("#par") == "Par: 312 moves — the solver's win"
    shot(page, "home-par")
    for path in ["/play/", "/leaderboard/"]:
        phone = site(path, width=390, height=844)
        assert phone.inner_text("#par") == "Par: 312 moves — the solver's win", path
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390, path
    shot(phone, "leaderboard-par-phone")
    play = site("/play/", width=390, height=844)
    shot(play, "play-par-phone")


def test_the_hint_button_waits_for_its_answer_and_a_late_answer_is_not_shown(site) -> None:
    page = site(f"/play/?deal={DEAL_1}", service_workers="block")
    held: list[Any] = []
    # The answer is held back until released below.
    page.route("**/api/hint/", lambda route: held.append(route))
    page.click("#hint")
    page.wait_for_function(
        "() => document.getElementById('hint-text').textContent.startsWith('Looking')"
    )
    assert page.locator("#hint").is_disabled()
    assert page.get_attribute("#hint", "aria-busy") == "true"

    play_keys(page, "S")  # the player moves on meanwhile
    page.wait_for_function("() => document.getElementById('moves').textContent === '1'")
    assert page.locator("#hint-box").is_hidden()
    assert len(held) == 1
    held[0].fulfill(json={"result": "move", "action": "52", "moves_to_win": 300, "seconds": 1.0})
    page.wait_for_function(
        "() => document.getElementById('hint-text').textContent.startsWith('The game moved on')"
    )
    assert page.locator("#hint-play").is_hidden()
    assert page.locator("#table .hinted").count() == 0
    assert not page.locator("#hint").is_disabled()
    assert engine(page, "game.log") == ["S"]


def test_every_page_and_the_api_docs_pass_the_content_security_policy(
    site, make_player, submit
) -> None:
    # The fixture fails the test on any violation the browser reports; these
    # pages have no other test that opens them all.
    game = submit(make_player("carol"), WIN_LOG)
    for path in ["/", "/rules/", "/leaderboard/", f"/replays/{game.pk}/", "/players/carol/",
                 "/accounts/signup/", "/admin/login/"]:  # fmt: skip
        page = site(path)
        page.wait_for_load_state("networkidle")
        assert page.errors == [], path
    docs = site("/api/docs/")
    docs.wait_for_selector(".swagger-ui .opblock", timeout=WAIT_MS)
    docs.click(".opblock-summary >> nth=0")
    docs.wait_for_load_state("networkidle")
    shot(docs, "api-docs")
    assert docs.errors == []
