"""The daily loop in a real browser: the home page, the after-game panel, a player's
record and the archive calendar, on a desktop and a 320-pixel phone.

The same uvicorn and Chromium as `test_browser.py`. Screenshots go to
tests/artifacts/ and, for the README with README_SHOTS=1, to docs/img/.
"""

from __future__ import annotations

import datetime
import os
import re
import shutil
from typing import Any

import pytest
from django.utils import timezone, translation
from django.utils.translation import gettext
from playwright.sync_api import expect

from games.models import DailyDeal
from games.services import attempt_assist, attempt_start
from leaderboards.services import day_close
from tests.fixtures import WIN, WIN_LOG, stored_game
from tests.paths import ROOT
from tests.web.conftest import ARTIFACTS, shot
from tests.web.test_browser import log_in, play_keys, start_ranked
from tests.web.test_layout import axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.postgres]


DOCS_IMG = ROOT / "docs" / "img"
PHONE = {"width": 320, "height": 640}


def shot_for_readme(page: Any, name: str, element: str | None = None) -> None:
    """`shot` of the page (or of one `element` only, when given); copied to docs/img/
    for the README only when README_SHOTS=1 asks for it, so that a test run never
    rewrites a tracked file (the pictures change with the date)."""
    shot(page.locator(element) if element else page, name)
    if os.environ.get("README_SHOTS") == "1":
        shutil.copyfile(ARTIFACTS / f"{name}.png", DOCS_IMG / f"{name}.png")


def fits(page: Any, width: int) -> None:
    page.wait_for_load_state("networkidle")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.errors == []


@pytest.fixture
def past_days(site, today, make_player):
    """Nine past days with a few players each; alice won six of them, lost one, missed two."""
    players = [make_player(name) for name in ("alice", "bob", "carol", "dave")]
    pattern = {1: True, 2: True, 3: True, 4: None, 5: False, 6: True, 7: None, 8: True, 9: True}
    for back, alice_won in pattern.items():
        date = today - datetime.timedelta(days=back)
        daily = DailyDeal.objects.create(date=date, number=100 + back, par=300)
        for n, player in enumerate(players):
            if player.username == "alice":
                if alice_won is None:
                    continue
                won = alice_won
            else:
                won = (back + n) % 3 != 0
            stored_game(
                player=player,
                daily=daily,
                score=1220 - 40 * n if won else 400 + 10 * n,
                moves=300 + 7 * n + back,
                won=won,
                duration_ms=600_000 + 30_000 * n,
            )
        if back > 1:
            day_close(date=date)
    # Their records, folded from the games stored directly above.
    from leaderboards.services import player_stats_recompute

    for player in players:
        player_stats_recompute(player=player)
    return players


def test_the_home_page_shows_yesterdays_winners_todays_spread_and_the_countdown(
    site, past_days, today
) -> None:
    for n, player in enumerate(past_days[1:]):
        stored_game(
            player=player,
            daily=DailyDeal.objects.get(date=today),
            score=900 + 100 * n,
            moves=320,
            won=n > 0,
        )
    page = site("/")
    page.wait_for_selector("time[data-countdown]")
    countdown = page.inner_text("time[data-countdown]")
    assert re.fullmatch(r"\d{1,2}:\d\d:\d\d", countdown), countdown
    assert "bob" in page.inner_text("#yesterday")
    assert "2 of 3 players won." in page.inner_text("#today-spread")
    assert page.locator("#today-spread table.bars tr").count() >= 1
    shot_for_readme(page, "home")
    phone = site("/", **PHONE)
    fits(phone, PHONE["width"])
    shot(phone, "home-phone")


def test_a_player_page_shows_the_record(site, past_days) -> None:
    page = site("/players/alice/")
    assert page.inner_text("#stat-played") == "7"
    assert page.inner_text("#stat-streak") == "3"
    assert page.inner_text("#stat-max-streak") == "3"
    assert page.inner_text("#stat-win-rate") == "86%"
    assert page.locator("#record table.bars tr").count() == 6
    shot_for_readme(page, "player")
    phone = site("/players/alice/", **PHONE)
    fits(phone, PHONE["width"])
    shot(phone, "player-phone")
    spanish = site("/players/alice/", language="es")
    assert "Racha actual" in spanish.inner_text("#record")


def test_the_archive_marks_the_players_days_today_too_and_plays_a_past_deal_as_practice(
    site, past_days, today
) -> None:
    page = alice_wins_today(site("/play/"))
    page.goto(page.url.split("/play/")[0] + "/archive/")
    # The archive opens on this month, today marked and counted at once.
    month_days = [today - datetime.timedelta(days=back) for back in range(0, 10)]
    month_days = [day for day in month_days if day.month == today.month]
    won = page.locator("#calendar td.won").count()
    lost = page.locator("#calendar td.lost").count()
    assert won + lost == sum(1 for day in month_days if (today - day).days not in (4, 7))
    expect(page.locator("#archive-today")).to_have_class(re.compile(r"\btoday\b.*\bwon\b"))
    summary = page.inner_text("#month-summary")
    assert summary.startswith(f"You played {won + lost} day")
    shot_for_readme(page, "archive")
    # A past day's deal opens as that day's practice, with its date and par.
    page.locator("#calendar td.served:not(.today) a.play").first.click()
    page.wait_for_url(re.compile(r"/play/\?deal=EH1-"))
    notice = page.locator("#past-day-notice")
    expect(notice).to_contain_text("Practice: the deal of ")
    day = re.search(r"\d{4}-\d\d-\d\d", notice.inner_text()).group(0)
    assert page.inner_text(".deal-label") == f"Deal of {day}"
    assert "Par: 300 moves" in page.inner_text("#par")
    shot(page, "archive-practice-desktop")
    phone = site("/" + page.url.split("/", 3)[3], **PHONE)  # the same path, on a phone
    expect(phone.locator("#past-day-notice")).to_be_visible()
    fits(phone, PHONE["width"])
    shot(phone, "archive-practice-320")
    phone = site("/archive/", **PHONE)
    fits(phone, PHONE["width"])
    assert axe_violations(phone) == []
    shot(phone, "archive-phone")
    dutch = site("/archive/", language="nl")
    assert "Archief" in dutch.inner_text("h1")


def test_a_closed_day_shows_its_final_results_and_spreads(site, past_days, today) -> None:
    day = (today - datetime.timedelta(days=2)).isoformat()
    for width, name in [(1280, "desktop"), (PHONE["width"], "320")]:
        page = site(f"/leaderboard/{day}/", width=width)
        results = page.locator("#day-results")
        expect(results).to_contain_text("Final results")
        expect(results).to_contain_text("of 4 players won.")
        assert results.locator("table.bars").count() == 2
        assert page.locator("table.board tbody tr").count() == 4
        fits(page, width)
        assert axe_violations(page) == []
        shot(page, f"day-final-results-{name}")


def alice_wins_today(page: Any, *, readme_shot: bool = False) -> Any:
    """On the play page: alice logs in and wins today's deal; its after-game panel is shown.
    The page may read the clipboard (the share button copies to it). With `readme_shot`,
    the README's picture of a game under way is taken on the way (README_SHOTS=1)."""
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    log_in(page, "alice")
    page.wait_for_url(re.compile(r"/play/"))
    if page.locator("#start-ranked").count():  # not started before the test
        start_ranked(page)
    actions = WIN["log"].split()
    if readme_shot and os.environ.get("README_SHOTS") == "1":
        # The README's picture of a game under way: a third of the win played.
        play_keys(page, " ".join(actions[: len(actions) // 3]))
        page.wait_for_function("() => document.getAnimations().length === 0")
        shot_for_readme(page, "play")
        actions = actions[len(actions) // 3 :]
    play_keys(page, " ".join(actions))
    page.wait_for_selector("#aftergame:not([hidden])")
    return page


def test_the_after_game_panel_shows_the_result_against_par_rank_streak_and_shares(
    site, past_days, today
) -> None:
    DailyDeal.objects.filter(date=today).update(par=WIN["moves"] - 3)
    attempt_start(player=past_days[0], date=timezone.now().date())
    stored_game(player=past_days[1], daily=DailyDeal.objects.get(date=today), score=10, moves=30)
    page = alice_wins_today(site("/play/"), readme_shot=True)
    expect(page.locator("#aftergame-rank")).to_contain_text(" of ")
    panel = page.inner_text("#aftergame")
    assert "+3" in panel
    assert "1 of 2" in page.inner_text("#aftergame-rank")
    # The last three days were won: today's win makes it four in a row.
    assert page.inner_text("#aftergame-streak") == "4"
    assert re.search(r"\d{1,2}:\d\d:\d\d", page.inner_text("#aftergame time"))
    page.evaluate("navigator.share = undefined")
    page.click("#share-button")
    expect(page.locator("[data-slot=share_state]")).not_to_be_empty()
    shared = page.evaluate("navigator.clipboard.readText()")
    assert f"Won in {WIN['moves']} moves" in shared and "rank 1 of 2" in shared
    assert WIN["log"] not in shared
    shot_for_readme(page, "aftergame", element="#aftergame")


@pytest.mark.parametrize("language", ["en", "es", "nl"])
def test_the_after_game_panel_says_why_an_assisted_game_has_no_rank_and_stops_the_streak(
    site, past_days, today, language
) -> None:
    alice = past_days[0]
    attempt_start(player=alice, date=today)
    attempt_assist(player=alice, deal=DailyDeal.objects.get(date=today).deal_code)
    page = site("/play/", language=language)
    log_in(page, "alice")
    page.wait_for_url(re.compile(r"/play/"))
    page.wait_for_selector('#attempt[data-assisted="true"]', state="attached")
    # A few actions, then the game is given up: assisted whether won or not.
    play_keys(page, " ".join(WIN_LOG[:20]))
    page.click("#submit-game")
    page.click("#confirm-ok")
    note = page.locator("#aftergame-assisted")
    expect(note).to_be_visible()
    # The streak is read with the day's par: once it is in, the rank has had its turn.
    expect(page.locator("#aftergame-streak")).not_to_have_text("–")
    with translation.override(language):
        why = gettext(
            "A hint was used: this game is on no board, so it has no rank, and it does "
            "not count for your streak."
        )
    assert note.inner_text() == why
    assert page.inner_text("#aftergame-rank") == "–"
    # Three days won before today; the assisted game does not make it four.
    assert page.inner_text("#aftergame-streak") == "3"
    assert page.locator("#aftergame-held").is_hidden()
    shot(page.locator("#aftergame"), f"aftergame-assisted-{language}")
    # On a 320 px phone nothing of the panel sticks out.
    page.set_viewport_size(PHONE)
    fits(page, PHONE["width"])
    assert (
        page.evaluate(
            """() => [...document.querySelectorAll('#aftergame *')]
            .filter(n => n.getBoundingClientRect().right > innerWidth + 0.5).length"""
        )
        == 0
    )
    shot(page.locator("#aftergame"), f"aftergame-assisted-{language}-phone")


@pytest.mark.parametrize("language", ["es", "nl"])
def test_the_after_game_panel_on_a_phone_in_spanish_and_dutch(
    site, past_days, today, language
) -> None:
    DailyDeal.objects.filter(date=today).update(par=WIN["moves"] - 3)
    page = alice_wins_today(site("/play/", language=language, **PHONE))
    expect(page.locator("#aftergame-rank")).not_to_have_text("–")
    with translation.override(language):
        words = [gettext("Your ranked game"), gettext("Against par"), gettext("Next deal in")]
        rank = gettext("{rank} of {total}").format(rank=1, total=1)
    panel = page.inner_text("#aftergame")
    assert all(word in panel for word in words), panel
    assert page.inner_text("#aftergame-rank") == rank
    assert "+3" in panel
    # Nothing of the panel sticks out of a 320 px screen.
    fits(page, PHONE["width"])
    wider = page.evaluate(
        """() => [...document.querySelectorAll('#aftergame *')]
            .filter(n => n.getBoundingClientRect().right > innerWidth + 0.5)
            .map(n => n.outerHTML.slice(0, 80))"""
    )
    assert wider == []
    # The text to share is in the player's language too.
    page.evaluate("navigator.share = undefined")
    page.click("#share-button")
    expect(page.locator("[data-slot=share_state]")).not_to_be_empty()
    shared = page.evaluate("navigator.clipboard.readText()")
    with translation.override(language):
        assert (gettext("Easy Harp Daily") in shared) or (today.isoformat() in shared)
    assert "Won in" not in shared, shared
    page.locator("#aftergame").scroll_into_view_if_needed()
    shot(page, f"aftergame-phone-{language}")


def test_the_home_page_invites_before_playing_and_shows_the_players_day_after(
    site, past_days, today
) -> None:
    alice = past_days[0]
    DailyDeal.objects.filter(date=today).update(par=WIN["moves"] - 3)
    for language, width in [("en", PHONE["width"]), ("es", 1280)]:
        before = site("/", player=alice, language=language, width=width)
        expect(before.locator("#your-day")).to_have_attribute("data-state", "to-play")
        fits(before, width)
        shot(before, f"home-before-{language}-{width}")
    page = alice_wins_today(site("/play/"))
    for language, width in [("en", 1280), ("en", PHONE["width"]), ("nl", PHONE["width"])]:
        after = site("/", player=alice, language=language, width=width)
        expect(after.locator("#your-day")).to_have_attribute("data-state", "played")
        expect(after.locator("#day-rank")).not_to_have_text("–")
        # Three won days before today: the win makes it four in a row.
        assert after.inner_text("#day-streak") == "4"
        if language == "en":
            assert after.inner_text("#day-result").endswith(", +3)")
        assert after.locator("#yesterday-mine a").count() == 1  # yesterday's own replay
        assert re.search(r"\d{1,2}:\d\d:\d\d", after.inner_text("time[data-countdown]"))
        fits(after, width)
        assert axe_violations(after) == []
        shot(after, f"home-after-{language}-{width}")
    assert page.errors == []


def test_the_home_pages_own_rank_and_the_days_figures_move_as_others_submit(
    site: Any, make_player: Any, submit: Any
) -> None:
    alice, bob = make_player("alice"), make_player("bob")
    submit(alice, "S")  # one card drawn: the lowest score there is
    page = site("/", player=alice, language="nl", width=PHONE["width"])
    page.wait_for_selector('[data-live-state][data-state="live"]')
    assert page.inner_text("#day-rank-text") == "1 van 1"

    submit(bob, WIN_LOG)

    page.wait_for_function(
        "() => document.getElementById('day-rank-text').textContent === '2 van 2'"
    )
    # The figures beside it follow: the percentile, the count, today's spread.
    # Last of two: the place in words, not "better than 0%".
    assert page.inner_text("#day-percentile") == "Laatste van 2"
    assert page.inner_text("#players-today") == "2 spelers vandaag."
    page.wait_for_selector('#today-spread[data-players="2"]')
    assert "1 van 2 spelers wonnen." in page.inner_text("#today-spread")
    assert page.locator("#today-spread table.bars tr").count() == 2  # two scores, far apart
    assert page.errors == []


# The players of the board's rows, in the page's order, as one text.
BOARD_PLAYERS = """() => [...document.querySelectorAll("table[data-board] td.lead[data-follow]")]
    .map((cell) => cell.dataset.follow).join(",")"""


def test_a_loss_that_outscored_a_win_ranks_below_it_on_the_board_and_home_pages(
    site: Any, make_player: Any, today: datetime.date
) -> None:
    lou, pat, sam = make_player("lou"), make_player("pat"), make_player("sam")
    daily = DailyDeal.objects.get(date=today)
    # lou stopped one card short with 1,300 points, before pat won at par with 1,280.
    stored_game(player=lou, daily=daily, score=1300, moves=160, announce=True)
    stored_game(player=pat, daily=daily, score=1280, moves=170, won=True, announce=True)

    board = site("/leaderboard/", player=lou)
    home = site("/", player=lou)
    for page in (board, home):
        page.wait_for_selector('[data-live-state][data-state="live"]')
        assert page.evaluate(BOARD_PLAYERS) == "pat,lou"
        ranks = page.locator("table[data-board] td.rank").all_inner_texts()
        assert ranks[:2] == ["1", "2"]
    assert board.inner_text("#my-rank").startswith("You are ranked 2 (score 1300")
    assert home.inner_text("#day-rank-text") == "2 of 2"

    # Another win, scoring less than the loss too, goes above it on both pages live.
    stored_game(player=sam, daily=daily, score=1220, moves=150, won=True, announce=True)
    for page in (board, home):
        page.wait_for_function(f"() => ({BOARD_PLAYERS})() === 'pat,sam,lou'")
    home.wait_for_function(
        "() => document.getElementById('day-rank-text').textContent === '3 of 3'"
    )
    assert board.errors == [] and home.errors == []
