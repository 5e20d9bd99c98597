"""Every page at phone, tablet and desktop widths, in a real browser, and its
accessibility as axe-core (the npm package, injected into the page) judges it.

At 320, 390, 768 and 1366 px no page scrolls sideways and no two controls
(links, buttons, fields, the stock) overlap or stick out of the window; on
every page axe finds no serious or critical violation of WCAG 2.2 A/AA, in
English at 390 and 1366 px (in the same pass), in Spanish and Dutch at 390
px. Screenshots at 320 and 1366 px go to tests/artifacts/.
"""

from __future__ import annotations

import datetime
import functools
import re
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from easyharp_site.accounts.reminders import reminder_set, reminder_token
from games.models import DailyDeal
from leagues.services import follow_add, league_create, league_join
from races.services import race_create
from tests.fixtures import DEAL_NUMBER, WIN_LOG, play_assisted

from .conftest import DEAL_1, shot

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

WIDTHS = [320, 390, 768, 1366]
LANGUAGES = ["en", "es", "nl"]
# axe judges each page at a phone's width and a desktop's.
AXE_WIDTHS = (390, 1366)
# Each page's screenshot, to look at: on the narrowest phone and on a desktop.
SHOT_WIDTHS = (320, 1366)
AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]

# The controls a player touches: no two may overlap, none may stick out.
CONTROLS_OVERLAPPING = """() => {
  const selector = 'a[href], button, input:not([type=hidden]), select, textarea, summary,'
    + ' [role=button], [tabindex]:not([tabindex="-1"])';
  const shown = [...document.querySelectorAll(selector)].filter((node) => {
    const box = node.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && node.checkVisibility({ visibilityProperty: true });
  });
  const text = (node) => (node.textContent || node.value || "").trim().slice(0, 30);
  const name = (node) => node.id ? `#${node.id}` : `${node.tagName.toLowerCase()} "${text(node)}"`;
  const problems = [];
  shown.forEach((node) => {
    const box = node.getBoundingClientRect();
    if (box.left < -0.5 || box.right > innerWidth + 0.5) problems.push(`${name(node)} sticks out`);
  });
  for (let i = 0; i < shown.length; i++) {
    for (let j = i + 1; j < shown.length; j++) {
      const [a, b] = [shown[i], shown[j]];
      if (a.contains(b) || b.contains(a)) continue;
      const [p, q] = [a.getBoundingClientRect(), b.getBoundingClientRect()];
      const wide = Math.min(p.right, q.right) - Math.max(p.left, q.left);
      const high = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
      if (wide > 1 && high > 1) problems.push(`${name(a)} overlaps ${name(b)}`);
    }
  }
  return problems;
}"""

# The table's own parts: the ten slots of the top row, the count badges and
# the nine columns each stay apart and inside the table.
TABLE_PARTS_OVERLAPPING = """() => {
  const table = document.getElementById("table").getBoundingClientRect();
  const parts = [
    ...document.querySelectorAll("#table .slot, #table .count, #table .column"),
  ].map((node) => ({ node, box: node.getBoundingClientRect() }));
  const problems = [];
  parts.forEach(({ node, box }) => {
    if (box.left < table.left - 0.5 || box.right > table.right + 0.5)
      problems.push(`${node.className} ${node.dataset.place ?? ""} leaves the table`);
  });
  for (let i = 0; i < parts.length; i++) {
    for (let j = i + 1; j < parts.length; j++) {
      const [a, b] = [parts[i], parts[j]];
      if (a.node.contains(b.node) || b.node.contains(a.node)) continue;
      const wide = Math.min(a.box.right, b.box.right) - Math.max(a.box.left, b.box.left);
      const high = Math.min(a.box.bottom, b.box.bottom) - Math.max(a.box.top, b.box.top);
      if (wide > 0.5 && high > 0.5)
        problems.push(`${a.node.className} overlaps ${b.node.className}`);
    }
  }
  return problems;
}"""


# The width up to which the site's CSS lays boards out as lists (site.css).
PHONE_MAX = 560
SCROLLING_SIDEWAYS = """() => [...document.querySelectorAll('.scroll-x')]
    .filter(node => node.scrollWidth > node.clientWidth + 1)
    .map(node => (node.firstElementChild?.id || node.firstElementChild?.className || '?'))"""


def pages_of_the_site(make_player: Any, submit: Any) -> list[tuple[str, Any]]:
    """Every page a visitor can open, with a stored game for its replay and
    player, and a league: (path, the player signed in, or None)."""
    player = make_player("a-rather-long-player-name")
    game = submit(player, WIN_LOG)
    league = league_create(owner=player, name="The Thursday evening card club")
    reminder_set(player=player, hour=18, language="en")
    # Friends: one in the league, one whose game used a hint, one who has not played.
    member, helped = make_player("another-rather-long-name"), make_player("assisted-friend")
    league_join(player=member, code=league.invite_code)
    play_assisted(helped, ["S"])
    for friend in (member, helped):
        follow_add(follower=player, followee=friend)
    race = race_create(host=player, minutes=10)
    yesterday = timezone.now().date() - datetime.timedelta(days=1)
    # A day gone by with the solver's line: its page's best games, and the line's replay.
    DailyDeal.objects.create(date=yesterday, number=DEAL_NUMBER + 1, par=3, par_log="S S S")
    anonymous = [
        "/",
        f"/play/?deal={DEAL_1}",
        "/leaderboard/",
        "/leaderboard/?order=moves",
        f"/leaderboard/{yesterday.isoformat()}/",
        f"/leaderboard/{yesterday.isoformat()}/par/",
        # Today's par line: locked for everyone until the day closes.
        f"/leaderboard/{timezone.now().date().isoformat()}/par/",
        # A visitor finds the running day's replay locked: a page of its own.
        f"/replays/{game.pk}/",
        # Its card, the page a shared result leads to (result only, never the log).
        f"/games/{game.pk}/",
        "/players/a-rather-long-player-name/",
        "/archive/",
        "/standings/",
        "/rules/",
        "/examples/",
        "/faq/",
        "/accounts/login/",
        "/accounts/signup/",
        "/accounts/password/reset/",
        f"/leagues/join/{league.invite_code}/",
        # The link of a reminder mail, with its button.
        f"/accounts/reminders/stop/{reminder_token(player.pk)}/",
        "/races/",
        "/races/players/a-rather-long-player-name/",
        "/no-such-page/",
    ]
    signed_in = [
        f"/replays/{game.pk}/",  # the player's own replay, table and all
        "/play/",
        "/accounts/",
        "/leagues/",
        f"/leagues/{league.slug}/",
        f"/leagues/{league.slug}/delete/",
        f"/leagues/{league.slug}/remove/?username=another-rather-long-name",
        "/standings/?period=month",
        "/friends/",
        "/friends/?q=a",
        "/leaderboard/?scope=friends",
        "/races/",
        # The host in the race's lobby, its link to share and its players listed.
        f"/races/{race.code}/",
    ]
    return [(path, None) for path in anonymous] + [(path, player) for path in signed_in]


SETTLED = """() => document.getAnimations().every(a => a.playState !== 'running')
    && [...document.querySelectorAll('[data-live-state]')].every(n => n.dataset.state === 'live')"""


def settle(page: Any) -> None:
    """Wait for the page as a player sees it: loaded, the cards' slides done (a
    loaded machine runs them late), and a live board's first snapshot in."""
    page.wait_for_load_state("load")
    page.wait_for_function(SETTLED)


TWO_FRAMES = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"


def resize(page: Any, width: int, height: int = 800) -> None:
    """Lay the page out at another width: resized, then two frames drawn."""
    page.set_viewport_size({"width": width, "height": height})
    page.evaluate(TWO_FRAMES)


def assert_fits(page: Any, where: str) -> None:
    width = page.evaluate("innerWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= width, where
    assert page.evaluate(CONTROLS_OVERLAPPING) == [], where
    if page.locator("#table").count():
        assert page.evaluate(TABLE_PARTS_OVERLAPPING) == [], where


@functools.cache
def axe_source() -> str:
    return AXE.read_text()


# Only the violations come back, each as its rule, impact and first targets:
# axe's whole result (every passing rule with its nodes' HTML) is megabytes.
AXE_RUN = """async (tags) => {
  const result = await axe.run(document, {
    runOnly: { type: "tag", values: tags },
    resultTypes: ["violations"],
  });
  return result.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    targets: v.nodes.slice(0, 3).map((node) => String(node.target[0])),
  }));
}"""


def axe_violations(page: Any) -> list[str]:
    """axe-core's serious and critical violations of WCAG 2.2 A/AA on the page as it is."""
    # Evaluated through the DevTools protocol, not as a page script, so the
    # Content-Security-Policy (no inline scripts) stays as it is served.
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(axe_source())
    return [
        f"{violation['id']} ({violation['impact']}): " + "; ".join(violation["targets"])
        for violation in page.evaluate(AXE_RUN, AXE_TAGS)
        if violation["impact"] in ("serious", "critical")
    ]


def test_no_page_scrolls_sideways_or_overlaps_its_controls_from_320_to_1366_px(
    site, make_player, submit
) -> None:
    for path, player in pages_of_the_site(make_player, submit):
        # One load per page, laid out again at each width (the layout is CSS only).
        page = site(path, width=WIDTHS[0], height=800, player=player)
        settle(page)
        assert page.url.endswith(path), path  # not sent elsewhere (to log in, say)
        assert page.evaluate("document.documentElement.lang") == "en", path
        for width in WIDTHS:
            resize(page, width)
            where = f"{path} at {width} px{' signed in' if player else ''}"
            assert_fits(page, where)
            if width <= PHONE_MAX:
                # Tables are lists on a phone: none hides columns in a sideways scroll.
                assert page.evaluate(SCROLLING_SIDEWAYS) == [], where
            if width in AXE_WIDTHS:
                # English is judged here, on the page already laid out; the
                # other languages by the test below.
                assert axe_violations(page) == [], where
            if width in SHOT_WIDTHS:
                name = re.sub(r"[^a-z0-9]+", "-", path).strip("-") or "home"
                shot(page, f"layout-{name}{'-signed-in' if player else ''}-{width}")
        assert page.errors == [], path
        page.context.close()


def test_the_table_fits_320_px_with_the_reminder_and_a_long_game_on_it(site) -> None:
    page = site(f"/play/?deal={DEAL_1}", width=320, height=640)
    # Cards in the waste and on a foundation, long columns: every count shows.
    page.fill("#action-input", "S S S 34")
    page.press("#action-input", "Enter")
    page.wait_for_function("() => document.getElementById('moves').textContent === '4'")
    assert page.locator("#table .count").count() == 2
    settle(page)  # the cards have slid to where the drag starts
    # 5C carries 4H: dragging it shows the one-card reminder, which covers nothing.
    run_base = page.locator('.column[data-place="c3"] .card.up').first
    target = page.locator('.column[data-place="c0"] .card.up').last
    box, goal = run_base.bounding_box(), target.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 6)
    page.mouse.down()
    page.mouse.move(goal["x"] + 5, goal["y"] + 10, steps=8)
    page.mouse.up()
    page.wait_for_selector("#reminder:not([hidden])")
    reminder = page.locator("#reminder").bounding_box()
    assert reminder["width"] >= 320 - 2 * 16 - 1  # the page's width, less its padding
    assert_fits(page, "play at 320 px with the reminder")
    shot(page, "play-320-reminder")


def test_boards_are_lists_on_a_phone_and_tables_on_a_desktop(site, make_player, submit) -> None:
    alice = make_player("alice")
    submit(alice, WIN_LOG)
    # Alice has played the day: its replays are open to her.
    phone = site("/leaderboard/", width=320, height=700, player=alice)
    settle(phone)
    row = phone.locator("table.board tbody tr").first
    assert phone.locator("table.board thead").evaluate("n => n.getBoundingClientRect().width") <= 1
    assert row.evaluate("n => getComputedStyle(n).display") == "flex"
    labels = row.locator("td[data-label]").evaluate_all("ns => ns.map(n => n.dataset.label)")
    assert labels == ["Rank", "Score", "Moves", "Time", "Won"]
    assert row.locator("a", has_text="replay").is_visible()
    player = site("/players/alice/", width=320, height=700, player=alice)
    settle(player)
    games = player.locator("#player-games tbody tr").first
    assert games.evaluate("n => getComputedStyle(n).display") == "flex"
    assert games.locator("a", has_text="replay").is_visible()
    assert games.locator("td[data-label='Moves']").is_visible()
    desktop = site("/leaderboard/", width=1366, height=800)
    assert desktop.locator("table.board thead").is_visible()


@pytest.mark.parametrize("language", [language for language in LANGUAGES if language != "en"])
def test_axe_finds_no_serious_violation_on_any_page(
    site, make_player, submit, language: str
) -> None:
    # At a phone's width only: what a language changes (its words, their labels
    # and names) axe judges the same at any width; English is judged at both.
    for path, player in pages_of_the_site(make_player, submit):
        page = site(path, language=language, width=AXE_WIDTHS[0], height=800, player=player)
        settle(page)
        assert page.evaluate("document.documentElement.lang") == language, path
        assert axe_violations(page) == [], f"{path} ({language}, {AXE_WIDTHS[0]} px)"
        page.context.close()


def test_the_live_state_stays_one_pill_on_a_phone_while_it_reconnects(site) -> None:
    page = site("/leaderboard/", language="nl", width=320, height=700)
    page.route_web_socket("**/ws/**", lambda socket: socket.close())
    page.reload()
    state = page.locator("[data-live-state]")
    page.wait_for_function(
        "() => document.querySelector('[data-live-state]').dataset.state === 'offline'"
        " && document.querySelector('[data-live-state]').textContent.trim() !== ''"
    )
    # Dutch says "opnieuw verbinden…": on one line, not broken across two.
    assert state.evaluate("node => node.getClientRects().length") == 1
    assert_fits(page, "the board reconnecting at 320 px in Dutch")
