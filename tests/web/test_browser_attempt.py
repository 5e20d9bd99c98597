"""Today's ranked attempt on the play page, in a real browser.

The same uvicorn and Chromium as `test_browser.py`: a signed-in player's
start step (its button, and nothing else) starts the attempt, the game is
stored on the server as it goes (each action over the attempt's socket, or
saved through the API while the socket is down; so it goes on after a reload
and in another browser, and a browser that fell behind takes up the longer
game instead of saving over it), a hint asks first and takes
the game off the boards, anonymous visitors are asked to sign in and shown
no table of the day, and the game saved in the browser belongs to its player.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from games import services
from games.models import Attempt, DailyDeal, Game
from leaderboards.models import BoardEntry
from tests.fixtures import WIN, WIN_LOG
from tests.web.conftest import DEAL_1, shot
from tests.web.test_browser import counters, engine, log_in, play_keys, start_ranked

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

# The server, the browser and the page fixture of the other browser tests.

PLAYED = 30  # actions played before the reload: more than one save's worth
ATTEMPT_SOCKET = re.compile(r"/ws/daily/[^/]+/attempt/$")


def eventually(page: Any, check: Callable[[], bool], what: str) -> None:
    """Wait (in the page's event loop) until `check()` holds; fail saying `what` did not."""
    for _ in range(100):
        if check():
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"never happened: {what}")


def saved_actions(username: str) -> int:
    attempt = Attempt.objects.filter(player__username=username).first()
    return len(attempt.log.split()) if attempt else -1


def requests_to(page: Any, fragment: str) -> list[str]:
    """The URLs of the page's requests containing `fragment`, as they are sent."""
    urls: list[str] = []

    def note(request: Any) -> None:
        if fragment in request.url:
            urls.append(request.url)

    page.on("request", note)
    return urls


def wait_for_mode(page: Any, mode: str) -> None:
    page.wait_for_selector(f'#attempt[data-mode="{mode}"]', state="attached")


def signed_in_play_page(site: Any, username: str, path: str = "/play/") -> Any:
    # Several of these tests stand in for the server's answers: no service worker.
    page = site(path, service_workers="block")
    log_in(page, username)
    page.wait_for_url(re.compile(r"/play/"))
    return page


def test_a_ranked_attempt_goes_on_after_a_reload_and_in_another_browser_and_ranks_once(
    site: Any, make_player: Any
) -> None:
    make_player("alice")
    page = signed_in_play_page(site, "alice")
    wait_for_mode(page, "none")
    assert "The clock starts when you press Start" in page.inner_text("#start-panel")
    assert Attempt.objects.count() == 0  # opening the page starts nothing

    # The start button starts the attempt; the clock runs; the game is saved as it goes.
    start_ranked(page)
    play_keys(page, " ".join(WIN_LOG[:PLAYED]))
    wait_for_mode(page, "open")
    page.wait_for_selector("#clock:not([hidden])")
    assert re.fullmatch(r"Time \d+:\d\d", page.inner_text("#clock"))
    assert page.inner_text("#attempt-mark") == "Ranked"
    assert page.locator("#restart").is_disabled()  # the ranked game is not played twice
    eventually(page, lambda: saved_actions("alice") >= 20, "a save after 20 actions")
    times = engine(page, "window.easyHarp.attempt.times")
    assert len(times) == PLAYED and times == sorted(times)

    # A reload goes on where the game was, and the page going away saved the rest.
    page.reload()
    wait_for_mode(page, "open")
    assert engine(page, "game.log") == WIN_LOG[:PLAYED]
    assert "goes on where you left it" in page.inner_text("#attempt")
    eventually(page, lambda: saved_actions("alice") == PLAYED, "the save on leaving the page")
    shot(page, "play-ranked-attempt")

    # Another browser (no saved game of its own) goes on with the server's game.
    other = signed_in_play_page(site, "alice")
    wait_for_mode(other, "open")
    assert engine(other, "game.log") == WIN_LOG[:PLAYED]
    play_keys(other, " ".join(WIN_LOG[PLAYED:]))
    other.wait_for_selector("#my-rank")
    assert other.get_attribute("#result-kind", "data-kind") == "ranked"
    assert other.inner_text("#result-kind") == "Ranked"
    assert re.search(
        rf"score {WIN['score']}, {WIN['moves']} moves in \d+:\d\d", other.inner_text("#result")
    )
    assert "Rank 1 of 1" in other.inner_text("#my-rank")
    assert other.locator("#submit-game").is_disabled()  # no second submission of the game
    shot(other, "play-ranked-won")

    game = Game.objects.get()
    assert (game.player.username, game.ranked, game.won, game.assisted) == (
        "alice",
        True,
        True,
        False,
    )
    assert game.duration_ms is not None
    assert game.times is not None
    assert len(game.times) == len(WIN_LOG) and game.times == sorted(game.times)
    assert game.times[-1] <= game.duration_ms + 2_000
    assert BoardEntry.objects.filter(player__username="alice").exists()

    # The first browser learns that the attempt is over: any further game is practice.
    page.reload()
    wait_for_mode(page, "done")
    assert "You have played today's ranked attempt" in page.inner_text("#attempt")
    assert not page.locator("#restart").is_disabled()
    page.click("#restart")
    page.click("#confirm-ok")
    play_keys(page, " ".join(WIN_LOG[:5]))
    page.click("#submit-game")
    page.click("#confirm-ok")
    page.wait_for_selector("#result-kind")
    assert page.get_attribute("#result-kind", "data-kind") == "practice"
    assert Game.objects.filter(ranked=True).count() == 1
    assert Game.objects.count() == 2
    assert page.errors == [] and other.errors == []


def test_a_hint_in_the_ranked_attempt_is_confirmed_first_and_takes_the_game_off_the_boards(
    site: Any, make_player: Any
) -> None:
    make_player("alice")
    page = signed_in_play_page(site, "alice")
    wait_for_mode(page, "none")
    hints = requests_to(page, "/api/hint/")
    start_ranked(page)
    play_keys(page, WIN_LOG[0])
    wait_for_mode(page, "open")

    # Cancelled: no hint is asked and the attempt stays unassisted.
    page.click("#hint")
    page.wait_for_selector("#confirm-dialog[open]")
    assert "takes your ranked game off today's boards" in page.inner_text("#confirm-text")
    assert page.inner_text("#confirm-ok") == "Ask for a hint"
    shot(page, "play-hint-confirmation")
    page.click("#confirm-cancel")
    page.wait_for_selector("#confirm-dialog:not([open])", state="attached")
    page.wait_for_timeout(300)
    assert hints == []
    assert not Attempt.objects.get().assisted
    assert page.get_attribute("#attempt", "data-assisted") == "false"

    # Confirmed: the hint comes, the attempt is assisted, and the page says so.
    page.click("#hint")
    page.click("#confirm-ok")
    page.wait_for_selector("#hint-box:not([hidden])")
    page.wait_for_selector('#attempt[data-assisted="true"]')
    assert len(hints) == 1
    assert Attempt.objects.get().assisted
    assert page.inner_text("#attempt-mark") == "Assisted"
    assert "a hint was used" in page.inner_text("#attempt")
    shot(page, "play-assisted")

    # A second hint of the same attempt asks nothing more.
    page.click("#hint")
    eventually(page, lambda: len(hints) == 2, "a second hint without confirmation")
    assert not page.locator("#confirm-dialog").evaluate("d => d.open")

    # Given up: stored as the ranked game, assisted, on no board.
    page.wait_for_selector("#hint:not([disabled])")
    page.click("#submit-game")
    assert "ends the attempt" in page.inner_text("#confirm-text")
    page.click("#confirm-ok")
    page.wait_for_selector("#result-kind")
    assert page.get_attribute("#result-kind", "data-kind") == "assisted"
    assert page.locator("#my-rank").count() == 0
    game = Game.objects.get()
    assert (game.ranked, game.assisted) == (True, True)
    assert not BoardEntry.objects.exists()
    # The after-game panel says why it has no rank and why the streak stops.
    page.wait_for_selector("#aftergame-assisted:not([hidden])")
    expect(page.locator("#aftergame-streak")).not_to_have_text("–")
    assert "does not count for your streak" in page.inner_text("#aftergame-assisted")
    assert page.inner_text("#aftergame-rank") == "–"
    assert page.inner_text("#aftergame-streak") == "0"
    assert page.locator("#aftergame-held").is_hidden()
    assert page.locator('#aftergame [data-slot="rank_note"]').is_hidden()

    # After the attempt, hints are practice: no confirmation.
    play_keys(page, WIN_LOG[1])
    page.click("#hint")
    eventually(page, lambda: len(hints) == 3, "a practice hint without confirmation")
    assert not page.locator("#confirm-dialog").evaluate("d => d.open")
    assert page.errors == []


def test_the_after_game_panel_says_a_held_game_waits_for_review(
    site: Any, make_player: Any
) -> None:
    make_player("alice")
    page = signed_in_play_page(site, "alice")
    wait_for_mode(page, "none")

    # The server's answer says what it says to a game's own player once it is held.
    def held(route: Any) -> None:
        answer = route.fetch()
        route.fulfill(response=answer, json={**answer.json(), "held": True})

    page.route("**/api/games/", held)
    boards = requests_to(page, "/leaderboard/")
    # A day with a par: a game given up is not compared with it (par is a win's).
    DailyDeal.objects.update(par=PLAYED + 100)
    start_ranked(page)
    play_keys(page, " ".join(WIN_LOG[:PLAYED]))
    wait_for_mode(page, "open")
    page.click("#submit-game")
    page.click("#confirm-ok")
    page.wait_for_selector("#aftergame-held:not([hidden])")
    assert "once a moderator has looked at it" in page.inner_text("#aftergame-held")
    assert page.locator("#aftergame-assisted").is_hidden()
    expect(page.locator("#aftergame-streak")).not_to_have_text("–")
    assert page.inner_text('#aftergame [data-slot="vs_par"]') == "–"
    # The game is on the board in the database: only the answer's `held` keeps the
    # page from asking the board for its rank. A request sent after the panel is
    # filled is noted after any the panel sent.
    later = requests_to(page, "/healthz")
    page.evaluate("fetch('/healthz/')")
    eventually(page, lambda: len(later) == 1, "the request sent after the panel")
    assert boards == []
    assert page.inner_text("#aftergame-rank") == "–"
    assert page.locator("#my-rank").count() == 0
    assert page.errors == []


def test_a_new_player_opens_the_play_page_without_an_error_in_the_console(
    site: Any, make_player: Any
) -> None:
    page = site("/rules/", player=make_player("alice"))
    errors: list[str] = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    attempt_reads = requests_to(page, "/attempt/")
    page.goto(page.url.replace("/rules/", "/play/"))
    page.wait_for_function("() => window.easyHarp.attempt.mode === 'none'")
    assert page.is_visible("#start-ranked")
    # No attempt yet: the page knew, and asked nothing the API answers with a 404.
    assert attempt_reads == []
    assert errors == []
    # Its start button starts the attempt.
    start_ranked(page)
    assert Attempt.objects.get().player.username == "alice"
    assert errors == []


def test_an_anonymous_visitor_is_asked_to_sign_in_and_plays_no_practice_of_the_day(
    site: Any,
) -> None:
    page = site("/play/", service_workers="block")
    attempt_requests = requests_to(page, "/attempt/")
    notice = page.inner_text("#anonymous-notice")
    assert "Sign in to play today's ranked game." in notice
    assert "opens for practice once you have played it" in notice
    assert page.get_attribute("#notice-login", "href").startswith("/accounts/login/?next=")
    assert page.get_attribute("#notice-signup", "href").startswith("/accounts/signup/?next=")
    # Practice of the day's deal now would be a rehearsal of the ranked game later.
    assert page.locator("#table").is_hidden()
    assert page.evaluate("window.easyHarp.act('S')") == "not_started"
    assert engine(page, "game.log") == []
    assert page.locator("#start-panel").count() == 0
    assert engine(page, "window.easyHarp.attempt.mode") == "practice"
    assert attempt_requests == []
    shot(page, "play-anonymous")

    # Another deal is practice for everyone: no notice about the day's ranked game.
    other = site(f"/play/?deal={DEAL_1}", service_workers="block")
    assert other.locator("#anonymous-notice").count() == 0


def test_a_game_saved_in_the_browser_stays_with_its_player(
    site: Any, server: str, make_player: Any
) -> None:
    make_player("alice")
    make_player("bob")
    page = signed_in_play_page(site, "alice", f"/play/?deal={DEAL_1}")
    play_keys(page, "S S 52 34")
    page.wait_for_function("() => document.getElementById('moves').textContent === '4'")
    alices = counters(page)

    # Alice leaves; Bob signs in on the same browser: a new game, nothing to submit.
    page.click(".site-nav form button")
    page.goto(f"http://{server}/play/?deal={DEAL_1}")
    assert counters(page) == (0, 0)  # the anonymous visitor does not get Alice's game either
    log_in(page, "bob")
    page.wait_for_url(re.compile(r"/play/"))
    assert page.inner_text("#account-link") == "bob"
    assert counters(page) == (0, 0)
    assert page.locator("#submit-game").is_disabled()

    # Alice back: her game is where she left it, and hers to submit.
    page.click(".site-nav form button")
    page.goto(f"http://{server}/play/?deal={DEAL_1}")
    log_in(page, "alice")
    page.wait_for_url(re.compile(r"/play/"))
    assert counters(page) == alices
    page.click("#submit-game")
    page.click("#confirm-ok")
    page.wait_for_selector("#result-kind")
    assert page.get_attribute("#result-kind", "data-kind") == "practice"
    assert page.locator("#submit-game").is_disabled()  # no second submission
    game = Game.objects.get()
    assert (game.player.username, game.moves, game.ranked) == ("alice", 4, False)


def test_a_save_the_server_refuses_or_cannot_take_is_shown_and_the_game_plays_on(
    site: Any, make_player: Any
) -> None:
    make_player("alice")
    page = signed_in_play_page(site, "alice")
    # The attempt's socket is refused: the page saves through the attempt API.
    page.route_web_socket(ATTEMPT_SOCKET, lambda socket: socket.close(code=1013))
    wait_for_mode(page, "none")
    start_ranked(page)
    play_keys(page, WIN_LOG[0])
    wait_for_mode(page, "open")

    # The server refuses the saved log (as it would a log its engine refuses).
    refusal = {
        "error": {
            "code": "illegal_action",
            "message": "Action 2: no.",
            "index": 2,
            "token": "12",
            "reason_code": "column_refuses",
            "params": {"card": "6D", "target": "9S"},
            "reason": "6D does not go on 9S",
        }
    }
    page.route("**/attempt/", lambda route: route.fulfill(status=400, json=refusal))
    play_keys(page, " ".join(WIN_LOG[1:20]))  # 20 actions: saved at once
    page.wait_for_selector("#attempt-save-failed:not([hidden])")
    failure = page.inner_text("#attempt-save-failed")
    assert failure.startswith("Your game could not be saved on the server")
    assert "6♦" in failure  # the refusal's reason, in the player's words
    assert engine(page, "game.log") == WIN_LOG[:20]  # the game is kept and plays on

    # The network fails: said the same way.
    page.unroute("**/attempt/")
    page.route("**/attempt/", lambda route: route.abort("connectionreset"))
    play_keys(page, WIN_LOG[20])
    page.wait_for_selector("#attempt-save-failed:not([hidden])")

    # The server answers again: the next save goes through and the warning goes.
    page.unroute("**/attempt/")
    play_keys(page, WIN_LOG[21])
    page.wait_for_selector("#attempt-save-failed", state="hidden")
    eventually(page, lambda: saved_actions("alice") == 22, "the save after the failures")
    assert page.errors == []


def test_a_game_begun_before_the_page_knows_the_attempt_is_the_ranked_one(
    site: Any, make_player: Any, today: Any
) -> None:
    # Started (on another device, say) and not played yet: the page reads it.
    services.attempt_start(player=make_player("alice"), date=today)
    page = site("/play/", service_workers="block")
    held: list[Any] = []

    def hold_the_first(route: Any) -> None:  # the page's reading of the attempt waits
        if held:
            route.continue_()
        else:
            held.append(route)

    page.route("**/attempt/", hold_the_first)
    log_in(page, "alice")
    page.wait_for_url(re.compile(r"/play/"))
    eventually(page, lambda: len(held) == 1, "the page reading the attempt")
    assert engine(page, "window.easyHarp.attempt.mode") == "loading"

    # The player wins meanwhile: the game waits for the answer, then starts
    # the attempt and is submitted as the ranked game.
    play_keys(page, WIN["log"])
    page.wait_for_function("() => window.easyHarp.game.won")
    assert Game.objects.count() == 0
    held[0].continue_()
    page.wait_for_selector("#my-rank")
    assert page.get_attribute("#result-kind", "data-kind") == "ranked"
    game = Game.objects.get()
    assert (game.ranked, game.won) == (True, True)
    assert game.times is not None and len(game.times) == len(WIN_LOG)


def test_a_game_whose_times_are_refused_is_sent_again_without_them(
    site: Any, make_player: Any
) -> None:
    make_player("alice")
    page = signed_in_play_page(site, "alice")
    wait_for_mode(page, "none")
    bodies: list[Any] = []

    def refuse_the_times_once(route: Any) -> None:
        bodies.append(route.request.post_data_json)
        if len(bodies) == 1:
            error = {
                "code": "invalid_times",
                "message": "No.",
                "index": 3,
                "reason_code": "decreasing",
            }
            route.fulfill(status=400, json={"error": error})
        else:
            route.continue_()

    page.route("**/api/games/", refuse_the_times_once)
    start_ranked(page)
    play_keys(page, WIN["log"])
    page.wait_for_selector("#my-rank")
    assert len(bodies) == 2
    assert len(bodies[0]["times"]) == len(WIN_LOG)
    assert "times" not in bodies[1] and bodies[1]["log"] == bodies[0]["log"]
    game = Game.objects.get()
    assert (game.ranked, game.won) == (True, True)
    # Never the refused times: the server's own, of the actions its socket stored
    # before the submission (how many depends on the machine's pace), or none.
    assert game.times is None or (
        len(game.times) == len(WIN_LOG) and game.times != bodies[0]["times"]
    )


def wait_stored(page: Any, actions: int) -> None:
    """Until the page's socket says the server stored `actions` actions."""
    page.wait_for_selector(f'#attempt[data-stored="{actions}"]', state="attached")


def two_devices(site: Any, first: int, then: int) -> tuple[Any, Any]:
    """alice's ranked game on device A, `first` actions stored; then device B goes on
    from the stored game and plays on to `then` actions, stored too."""
    device_a = signed_in_play_page(site, "alice")
    wait_for_mode(device_a, "none")
    start_ranked(device_a)
    play_keys(device_a, " ".join(WIN_LOG[:first]))
    wait_stored(device_a, first)
    device_b = signed_in_play_page(site, "alice")
    wait_for_mode(device_b, "open")
    assert engine(device_b, "game.log") == WIN_LOG[:first]
    play_keys(device_b, " ".join(WIN_LOG[first:then]))
    wait_stored(device_b, then)
    return device_a, device_b


def test_a_device_that_fell_behind_and_played_another_move_goes_on_from_the_stored_game(
    site: Any, make_player: Any
) -> None:
    make_player("alice")
    device_a, device_b = two_devices(site, 6, 12)

    # A plays something else than the stored game's 7th action: the server refuses
    # it, and A takes up the stored game, saying why and nothing of a failure.
    other = "U" if WIN_LOG[6] != "U" else "S"
    play_keys(device_a, other)
    expect(device_a.locator("#attempt-notice")).to_have_text(
        "You played this game further on another device, so it goes on from there."
    )
    device_a.wait_for_function("() => window.easyHarp.game.log.length === 12")
    assert engine(device_a, "game.log") == WIN_LOG[:12]
    assert device_a.locator("#attempt-save-failed").is_hidden()
    assert Attempt.objects.get().log.split() == WIN_LOG[:12]
    assert device_a.errors == [] and device_b.errors == []


def test_a_device_that_fell_behind_takes_up_the_longer_game_and_says_why(
    site: Any, make_player: Any
) -> None:
    make_player("alice")
    # Device A plays 20 actions, each stored as it goes; device B goes on from the
    # stored game and plays 20 more.
    device_a, device_b = two_devices(site, 20, 40)

    # Device A, behind, plays one more action: the server holds a longer game,
    # and A goes on from B's game and says why.
    play_keys(device_a, WIN_LOG[20])
    notice = device_a.locator("#attempt-notice")
    expect(notice).to_have_text(
        "You played this game further on another device, so it goes on from there."
    )
    expect(device_a.locator("#table")).to_have_attribute(
        "data-moves", str(engine(device_b, "game.table().moves"))
    )
    assert engine(device_a, "game.log") == WIN_LOG[:40]
    assert device_a.locator("#attempt-save-failed").is_hidden()
    times = engine(device_a, "window.easyHarp.attempt.times")
    assert len(times) == 40 and times == sorted(times)
    shot(device_a, "play-stale-save")

    # The server kept the longer game, and A plays on from it.
    assert Attempt.objects.get().log.split() == WIN_LOG[:40]
    play_keys(device_a, " ".join(WIN_LOG[40:60]))
    wait_stored(device_a, 60)
    assert Attempt.objects.get().log.split() == WIN_LOG[:60]
    assert device_a.errors == [] and device_b.errors == []
