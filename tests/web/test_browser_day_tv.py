"""A closed day's TV in a real browser: its page links the best games and the solver's
line, whose replay plays to the par; a game's replay says how far it was from it.
Today's line stays locked, whoever asks."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from django.utils import timezone

from games import rules
from games.models import DailyDeal
from tests.fixtures import DEAL_NUMBER, WIN_LOG, stored_game
from tests.web.conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

PAR = rules.replay(DEAL_NUMBER, WIN_LOG)


@pytest.mark.parametrize("width", [320, 1280])
def test_the_day_s_page_leads_to_its_best_game_and_to_the_par_line_which_plays_to_the_end(
    site: Any, make_player: Any, width: int
) -> None:
    # Today's deal is another: yesterday's is deal 4, whose win the tests know.
    DailyDeal.objects.filter(date=timezone.now().date()).update(number=DEAL_NUMBER + 1)
    yesterday = DailyDeal.objects.create(
        date=timezone.now().date() - datetime.timedelta(days=1),
        number=DEAL_NUMBER,
        par=PAR.moves,
        par_log=" ".join(WIN_LOG),
    )
    ann = make_player("ann")
    stored_game(player=ann, daily=yesterday, score=900, moves=PAR.moves + 12, won=True)
    page = site(f"/leaderboard/{yesterday.date.isoformat()}/", width=width, height=800)
    tv = page.locator("#day-tv")
    assert tv.locator('[data-tv="score"]').inner_text() == "No. 1 by score: ann, score 900"
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shot(tv, f"day-tv-{width}")

    page.click("#par-replay-link")
    page.wait_for_function(
        "(last) => document.getElementById('scrub').max === String(last)", arg=len(WIN_LOG)
    )
    page.click("#last")
    page.wait_for_function(
        "(moves) => document.getElementById('moves').textContent === String(moves)",
        arg=PAR.moves,
    )
    assert page.inner_text("#score") == str(PAR.score)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shot(page, f"par-replay-{width}")

    page.go_back()
    page.locator('#day-tv [data-tv="score"] a').click()
    fact = page.locator("#fact-par")
    assert fact.inner_text().startswith(f"+12 (par: {PAR.moves} moves)")
    shot(page, f"replay-against-par-{width}")
    assert page.errors == []


def test_today_s_par_line_is_locked_in_the_page_s_language(site: Any) -> None:
    today = timezone.now().date().isoformat()
    DailyDeal.objects.filter(date=today).update(par_log=" ".join(WIN_LOG))

    page = site(f"/leaderboard/{today}/par/", language="es", width=320)

    assert "es la respuesta del día" in page.inner_text("#par-locked")
    assert page.locator("#table").count() == 0
