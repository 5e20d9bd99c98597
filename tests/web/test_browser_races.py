"""A race in a real browser: three players from the link to the result.

The host creates the race on the races page and passes its link; two friends
open it and join, one of them on a 320 px phone. The host starts it: every
page counts down, then plays. Each page shows the others' progress (never
their cards) as they play; one player reloads mid-race and goes on from the
game the server stored, another leaves (the page asks first). The host wins:
every page shows the results, and each player's game opens as a replay.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from games.models import DailyDeal
from races.models import Race, Racer
from tests.fixtures import DEAL_NUMBER, WIN_LOG
from tests.web.conftest import shot
from tests.web.test_browser import play_keys
from tests.web.test_browser_daily import shot_for_readme
from tests.web.test_layout import CONTROLS_OVERLAPPING, axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.postgres]


def stored(player: str) -> int:
    """Actions the server stored of the player's race game."""
    return len(Racer.objects.get(player__username=player).log.split())


def shows_progress(page: Any, player: str, moves: int) -> None:
    """Wait until `page` lists `player` with `moves` moves."""
    page.wait_for_selector(f'#race-players li[data-player="{player}"][data-moves="{moves}"]')


def assert_fits(page: Any) -> None:
    width = page.evaluate("innerWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.evaluate(CONTROLS_OVERLAPPING) == []


def race_in_lobby(code: str, host: Any) -> Race:
    """A race of deal 4 waiting in its lobby, `host` its only player."""
    race = Race.objects.create(
        code=code, host=host, deal_number=DEAL_NUMBER, created_at=timezone.now(),
        time_limit=timezone.timedelta(minutes=10),
    )  # fmt: skip
    Racer.objects.create(race=race, player=host, joined_at=timezone.now())
    return race


def test_three_players_race_from_the_link_to_the_result_one_reloading_mid_race(
    site: Any, make_player: Any
) -> None:
    alice, bob, carol = make_player("alice"), make_player("bob"), make_player("carol")
    # Today's deal is another: the race plays deal 4, whose win the tests know.
    DailyDeal.objects.filter(date=timezone.now().date()).update(number=DEAL_NUMBER + 1)

    host = site("/races/", player=alice)
    host.select_option("#race-minutes", "5")
    host.click("#create-race button[type=submit]")
    host.wait_for_selector("#race-link")
    link = host.input_value("#race-link")
    race = Race.objects.get()
    assert link.endswith(f"/races/{race.code}/")
    Race.objects.filter(pk=race.pk).update(deal_number=DEAL_NUMBER)

    path = link[link.index("/races/") :]
    phone = site(path, player=bob, width=320, height=700)
    phone.click("#race-join")
    friend = site(path, player=carol)
    friend.click("#race-join")
    for page in (host, phone, friend):
        page.wait_for_selector('#race-players li[data-player="carol"]')
    assert host.inner_text("#race-count") == "3 of 8 players"
    assert_fits(phone)
    shot(phone, "race-lobby-320")

    host.click("#race-start")
    for page in (host, phone, friend):
        page.wait_for_selector('#race-play[data-phase="countdown"]')
    assert phone.locator("#race-countdown").is_visible()
    for page in (host, phone, friend):
        page.wait_for_selector('#race-play[data-phase="running"]')

    play_keys(phone, " ".join(WIN_LOG[:20]))
    play_keys(friend, " ".join(WIN_LOG[:10]))
    phone.wait_for_selector('#race-play[data-stored="20"]')
    shows_progress(host, "bob", 20)
    shows_progress(host, "carol", 10)
    # Progress, never cards: the host's page names no card of another's table.
    assert host.locator("#race-players .card").count() == 0
    assert_fits(phone)
    shot_for_readme(phone, "race-320")
    shot_for_readme(host, "race")

    # The phone reloads mid-race: its table comes back from the stored game.
    moves = phone.inner_text("#moves")
    phone.reload()
    phone.wait_for_selector('#race-play[data-phase="running"][data-actions="20"]')
    assert phone.inner_text("#moves") == moves
    play_keys(phone, " ".join(WIN_LOG[20:30]))
    phone.wait_for_selector('#race-play[data-stored="30"]')
    assert stored("bob") == 30
    shows_progress(friend, "bob", 30)

    # Carol leaves (the page asks first): her game stops at 10 actions, listed as left.
    friend.click("#race-leave")
    friend.click("#confirm-ok")
    shows_progress(host, "carol", 10)
    host.wait_for_selector('#race-players li[data-player="carol"][data-state="left"]')
    friend.wait_for_selector('#race-play[data-phase="running"]')
    play_keys(friend, "S")
    assert friend.inner_text("#message") == "You left this race: your game stops here."

    play_keys(host, " ".join(WIN_LOG))
    for page in (host, phone, friend):
        page.wait_for_selector("#race-results")
    assert "alice won the race!" in phone.inner_text("#race-status")
    places = phone.locator("#race-results-table tbody tr").evaluate_all(
        "rows => rows.map(row => row.dataset.player)"
    )
    assert places == ["alice", "bob", "carol"]
    assert stored("carol") == 10
    assert_fits(phone)
    assert axe_violations(phone) == []
    shot(phone, "race-results-320")
    shot(host, "race-results")

    phone.click('#race-results-table tr[data-player="bob"] .race-replay')
    phone.wait_for_selector("#step-label")
    assert phone.url.endswith(f"/replays/{Racer.objects.get(player=bob).game_id}/")
    assert all(page.errors == [] for page in (host, phone, friend))


def test_a_race_page_speaks_the_players_language(site: Any, make_player: Any) -> None:
    alice, bob = make_player("alice"), make_player("bob")
    race_in_lobby("race-in-dutch", alice)

    page = site("/races/race-in-dutch/", player=bob, language="nl", width=320)

    assert page.inner_text("#race-join") == "Doe mee aan de race"
    page.click("#race-join")
    page.wait_for_selector('#race-players li[data-player="bob"]')
    assert "Wachten tot alice de race start." in page.inner_text("#race-status")
    assert page.errors == []


def test_the_player_who_becomes_host_when_the_host_leaves_can_start_at_once(
    site: Any, make_player: Any
) -> None:
    carol, bob = make_player("carol"), make_player("bob")
    race = race_in_lobby("race-handed-on", carol)
    path = f"/races/{race.code}/"
    host = site(path, player=carol)
    phone = site(path, player=bob, language="es", width=320, height=700)
    phone.click("#race-join")
    phone.wait_for_selector('#race-players li[data-player="bob"]')
    assert phone.locator("#race-start").is_hidden()

    host.click("#race-lobby-leave")
    phone.wait_for_selector("#race-start", state="visible")
    assert phone.locator("#race-players li").count() == 1
    phone.click("#race-start")
    phone.wait_for_selector('#race-play[data-phase="countdown"]')
    assert phone.errors == []


def test_someone_not_in_the_race_watches_its_lobby_and_start_live(
    site: Any, make_player: Any
) -> None:
    alice, bob, carol = make_player("alice"), make_player("bob"), make_player("carol")
    race = race_in_lobby("race-watched", alice)
    path = f"/races/{race.code}/"

    visitor = site(path)
    onlooker = site(path, player=bob, language="es")
    host = site(path, player=alice)
    for page in (visitor, onlooker):
        assert page.locator("#race-closed").is_hidden()
    site(path, player=carol).click("#race-join")

    for page in (visitor, onlooker):
        page.wait_for_selector('#race-players li[data-player="carol"]')
    assert visitor.inner_text("#race-count") == "2 of 8 players"

    host.click("#race-start")
    for page in (visitor, onlooker):
        page.wait_for_selector("#race-closed:not([hidden])")
        page.wait_for_selector(
            '#race-status:is([data-status="countdown"], [data-status="running"])'
        )
        assert page.locator("#race-lobby").is_hidden()
        # A watcher's page never gets the deal: it has no game to draw.
        assert page.evaluate("window.easyHarp.game") is None
    assert "ya ha empezado" in onlooker.inner_text("#race-closed")
    assert axe_violations(visitor) == []
    assert all(page.errors == [] for page in (visitor, onlooker, host))


def test_a_hint_on_a_deal_a_race_plays_is_refused_in_the_players_language(
    site: Any, make_player: Any
) -> None:
    alice = make_player("alice")
    now = timezone.now()
    race = Race.objects.create(
        code="race-held", host=alice, deal_number=DEAL_NUMBER + 7, created_at=now,
        time_limit=timezone.timedelta(minutes=10), starts_at=now,
        ends_at=now + timezone.timedelta(minutes=10),
    )  # fmt: skip
    page = site(f"/play/?deal={race.deal_code}", language="es")

    with page.expect_response("**/api/hint/") as answer:
        page.click("#hint")

    assert (answer.value.status, answer.value.json()["error"]["code"]) == (403, "race_running")
    page.wait_for_selector("#hint-box:not([hidden])")
    assert page.inner_text("#hint-text") == (
        "Una carrera se juega ahora mismo con este reparto: sus pistas esperan a que termine "
        "la carrera."
    )
    assert page.errors == []
