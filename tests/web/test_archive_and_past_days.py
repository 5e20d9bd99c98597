"""The archive with today in it, a past deal played as that day's practice, and a
day that is over showing its results on its board's page."""

from __future__ import annotations

import datetime
import html
import re

import pytest
from django.test import Client

from games.models import DailyDeal
from leaderboards.services import day_close
from tests.fixtures import WIN_LOG, stored_game

# A day's link to play starts with a ▶, which replaces its words on a phone.
PLAY_ICON = '<span class="play-icon" aria-hidden="true">▶</span>'

pytestmark = pytest.mark.django_db


def text_of(response) -> str:
    body = re.sub(r"<script.*?</script>", " ", response.content.decode(), flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def today_cell(response) -> str:
    (cell,) = re.findall(r'<td [^>]*id="archive-today".*?</td>', response.content.decode(), re.S)
    return cell


@pytest.fixture
def yesterday(daily: DailyDeal) -> DailyDeal:
    return DailyDeal.objects.create(date=daily.date - datetime.timedelta(days=1), number=7, par=287)


class TestArchive:
    def test_it_opens_on_this_month_and_counts_todays_win_at_once(
        self, client: Client, daily: DailyDeal, make_player, submit
    ) -> None:
        alice = make_player("alice")
        client.force_login(alice)
        before = client.get("/archive/")
        assert before.context["month"] == daily.date.replace(day=1)
        cell = today_cell(before)
        assert 'href="/play/"' in cell and "?deal=" not in cell  # today's is the ranked game
        assert "You played 0 days this month and won 0." in text_of(before)

        submit(alice, WIN_LOG)
        after = client.get("/archive/")
        cell = today_cell(after)
        assert 'class="served today won"' in cell
        assert "#1" in cell and "1 player" in cell
        assert 'class="small play"' not in cell  # played: nothing left to play today
        assert "/replays/" not in after.content.decode()
        assert "You played 1 day this month and won 1." in text_of(after)

    def test_a_past_day_is_offered_as_practice(
        self, client: Client, daily: DailyDeal, yesterday: DailyDeal
    ) -> None:
        # Yesterday's month: on the first of a month, yesterday is on last month's page.
        body = client.get(f"/archive/{yesterday.date:%Y-%m}/").content.decode()
        link = f'href="/play/?deal={yesterday.deal_code}">'
        assert f'{link}{PLAY_ICON} <span class="play-label">Practice</span></a>' in body


class TestPastDealPlayedAgain:
    @pytest.mark.parametrize(
        ("language", "label", "notice"),
        [
            ("en", "Deal of {date}", "Practice: the deal of {date}."),
            ("es", "Reparto del {date}", "Práctica: el reparto del {date}."),
            ("nl", "Kaartverdeling van {date}", "Oefening: de kaartverdeling van {date}."),
        ],
    )
    def test_it_says_its_day_and_par_and_that_it_is_practice(
        self,
        client: Client,
        daily: DailyDeal,
        yesterday: DailyDeal,
        language: str,
        label: str,
        notice: str,
    ) -> None:
        response = client.get(f"/play/?deal={yesterday.deal_code}", HTTP_ACCEPT_LANGUAGE=language)
        said = text_of(response)
        date = yesterday.date.isoformat()
        assert label.format(date=date) in said
        assert notice.format(date=date) in said
        assert response.context["par"] == 287 and not response.context["is_daily"]
        assert 'id="par"' in response.content.decode()

    def test_a_deal_that_was_never_a_days_has_neither(
        self, client: Client, daily: DailyDeal, yesterday: DailyDeal
    ) -> None:
        response = client.get("/play/?deal=EH1-N-AAAAAAB")
        assert response.context["past_day"] is None and response.context["par"] is None
        assert 'id="past-day-notice"' not in response.content.decode()


class TestDayThatIsOver:
    def test_a_closed_day_shows_its_final_results_and_spreads(
        self, client: Client, daily: DailyDeal, yesterday: DailyDeal, make_player
    ) -> None:
        for n, name in enumerate(["alice", "bob", "carol"]):
            stored_game(
                player=make_player(name),
                daily=yesterday,
                score=1220 - 100 * n,
                moves=290 + n,
                won=n < 2,
                duration_ms=60_000,
            )
        day_close(date=yesterday.date)
        response = client.get(f"/leaderboard/{yesterday.date.isoformat()}/")
        said = text_of(response)
        assert "Final results" in said and "2 of 3 players won." in said
        assert "Nobody" not in said
        assert len(response.context["score_bars"]) >= 1
        assert sum(bar["count"] for bar in response.context["moves_bars"]) == 2
        assert 'id="day-results"' in response.content.decode()

    def test_a_day_nobody_played_says_so_without_a_yet(
        self, client: Client, daily: DailyDeal, yesterday: DailyDeal
    ) -> None:
        day_close(date=yesterday.date)
        said = text_of(client.get(f"/leaderboard/{yesterday.date.isoformat()}/"))
        assert "Nobody played this day." in said
        assert "yet" not in said
        spanish = client.get(f"/leaderboard/{yesterday.date}/", HTTP_ACCEPT_LANGUAGE="es")
        assert "Nadie jugó este día." in text_of(spanish)

    def test_today_has_no_results_section_while_it_runs(
        self, client: Client, daily: DailyDeal
    ) -> None:
        response = client.get("/leaderboard/")
        assert 'id="day-results"' not in response.content.decode()
        assert "Nobody has played this day yet." in text_of(response)
