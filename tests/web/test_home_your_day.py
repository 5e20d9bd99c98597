"""The home page as the player's day: an invitation before they play, their
result against par, rank, percentile, streak, the countdown and yesterday's
final result after."""

from __future__ import annotations

import datetime
import html
import re

import pytest
from django.test import Client
from django.utils import timezone, translation
from django.utils.formats import date_format

from games.models import DailyDeal, Game
from games.selectors import daily_day_number
from games.services import attempt_start
from leaderboards.services import day_close, player_stats_recompute
from tests.fixtures import WIN, WIN_LOG, play_assisted, stored_game

pytestmark = pytest.mark.django_db


def text_of(response, element_id: str) -> str:
    """The text of the element with this id (and what it holds), tags left out."""
    body = response.content.decode()
    match = re.search(rf'<(\w+)[^>]*id="{element_id}"[^>]*>', body)
    assert match, element_id
    tag, start, depth, at = match.group(1), match.end(), 1, match.end()
    for other in re.finditer(rf"<(/?){tag}\b[^>]*>", body[start:]):
        depth += -1 if other.group(1) else 1
        if depth == 0:
            at = start + other.start()
            break
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body[start:at])).split())


@pytest.fixture
def yesterday(daily: DailyDeal) -> DailyDeal:
    return DailyDeal.objects.create(date=daily.date - datetime.timedelta(days=1), number=7, par=300)


class TestTheHeadline:
    """The page opens with the day's number and what the game is, in a line."""

    @pytest.mark.parametrize(
        ("language", "about"),
        [
            ("en", "A solitaire with two decks"),
            ("es", "Un solitario de dos barajas"),
            ("nl", "Een patience met twee kaartspellen"),
        ],
    )
    def test_it_names_the_day_by_its_number_and_says_what_the_game_is(
        self, client: Client, daily: DailyDeal, language: str, about: str
    ) -> None:
        number = daily_day_number(daily.date)
        response = client.get("/", HTTP_ACCEPT_LANGUAGE=language)
        with translation.override(language):
            date = date_format(daily.date, "DATE_FORMAT")
        assert text_of(response, "day-title") == f"Easy Harp Daily #{number} {date}"
        said = text_of(response, "about-game")
        assert said.startswith(about), said
        # One deal a day for everyone, one ranked attempt: said in each language.
        words = {
            "en": ("one deal a day", "ranked attempt"),
            "es": ("un reparto al día", "intento clasificatorio"),
            "nl": ("één kaartverdeling per dag", "officiële poging"),
        }
        assert all(word in said for word in words[language]), said

    def test_spanish_dates_say_de(self, client: Client, daily: DailyDeal) -> None:
        said = text_of(client.get("/", HTTP_ACCEPT_LANGUAGE="es"), "day-title")
        assert re.search(r"\d+ de \w+ de \d{4}$", said), said


class TestBeforePlaying:
    def test_a_visitor_is_invited_to_play_and_to_sign_in(
        self, client: Client, daily: DailyDeal
    ) -> None:
        response = client.get("/")
        assert 'data-state="visitor"' in response.content.decode()
        invite = text_of(response, "day-invite")
        assert "Sign in to play today's deal" in invite
        assert "Any other deal is yours to practise without an account" in invite

    def test_a_player_who_has_not_played_is_invited_to_their_ranked_attempt(
        self, client: Client, daily: DailyDeal, yesterday: DailyDeal, make_player
    ) -> None:
        client.force_login(make_player("alice"))
        response = client.get("/")
        body = response.content.decode()
        assert 'data-state="to-play"' in body
        assert "You have not played today's deal yet." in text_of(response, "day-invite")
        assert "Your best today" not in body and 'id="played"' not in body
        said = text_of(response, "yesterday-mine")
        assert said == "You did not play yesterday's deal. Play it as practice"
        assert f'?deal={yesterday.deal_code}"' in body

    def test_a_yesterday_with_no_deal_stored_has_no_board_to_link_to(
        self, client: Client, daily: DailyDeal, make_player
    ) -> None:
        client.force_login(make_player("alice"))
        body = client.get("/").content.decode()
        assert 'id="yesterday"' not in body and "Yesterday's board" not in body
        assert 'id="yesterday-mine"' not in body

    def test_a_streak_at_stake_is_said(
        self, client: Client, daily: DailyDeal, yesterday: DailyDeal, make_player
    ) -> None:
        alice = make_player("alice")
        stored_game(player=alice, daily=yesterday, score=1220, moves=310, won=True, announce=True)
        client.force_login(alice)
        said = text_of(client.get("/", HTTP_ACCEPT_LANGUAGE="es"), "day-streak-at-stake")
        assert said == "Tu racha: 1 día. Juega el reparto de hoy para mantenerla."

    def test_an_open_attempt_is_offered_to_go_on(
        self, client: Client, daily: DailyDeal, make_player
    ) -> None:
        alice = make_player("alice")
        attempt_start(player=alice, date=timezone.now().date())
        client.force_login(alice)
        response = client.get("/")
        assert 'data-state="open"' in response.content.decode()
        assert "Go on with your game" in response.content.decode()


class TestAfterPlaying:
    def test_it_shows_the_result_against_par_rank_percentile_and_streak(
        self, client: Client, daily: DailyDeal, yesterday: DailyDeal, make_player, submit
    ) -> None:
        DailyDeal.objects.filter(pk=daily.pk).update(par=WIN["moves"] - 3)
        alice = make_player("alice")
        stored_game(player=alice, daily=yesterday, score=1220, moves=310, won=True, announce=True)
        for name in ("bob", "carol"):
            stored_game(player=make_player(name), daily=daily, score=100, moves=50)
        submit(alice, WIN_LOG)
        client.force_login(alice)
        response = client.get("/")
        assert 'data-state="played"' in response.content.decode()
        assert text_of(response, "played") == "✓ You played today's deal"
        moves = WIN["moves"]
        assert text_of(response, "day-result") == f"Won in {moves} moves (par {moves - 3}, +3)"
        assert text_of(response, "day-score") == str(WIN["score"])
        assert text_of(response, "day-rank") == "1 of 3 so far"
        # First of three: the place in words, not "better than 100%".
        assert text_of(response, "day-percentile") == "Best of 3"
        assert text_of(response, "players-today") == "3 players today."
        # "Today so far" alone, as the page takes it again when the live board grows.
        spread = client.get("/today/spread/")
        assert spread.status_code == 200
        assert text_of(spread, "today-spread").startswith("Today so far 1 of 3 players won.")
        assert 'data-players="3"' in spread.content.decode()
        assert text_of(response, "today-spread") == text_of(spread, "today-spread")
        assert text_of(response, "day-streak") == "2"  # yesterday and today
        assert "Next deal in" in response.content.decode()
        said = text_of(response, "yesterday-mine")
        # Yesterday is not closed yet: its rank may still move.
        assert said == (
            "Yesterday: Won in 310 moves (par 300, +10) · Score 1220 · rank 1 of 1 (so far) replay"
        )
        day_close(date=yesterday.date)
        said = text_of(client.get("/"), "yesterday-mine")
        assert "rank 1 of 1" in said and "so far" not in said

    def test_an_assisted_game_has_no_rank_and_says_why(
        self, client: Client, daily: DailyDeal, make_player
    ) -> None:
        alice = make_player("alice")
        play_assisted(alice, WIN_LOG[:30])
        player_stats_recompute(player=alice)
        client.force_login(alice)
        response = client.get("/")
        assert text_of(response, "day-rank") == "–"
        assert text_of(response, "day-percentile") == "–"
        assert text_of(response, "day-streak") == "0"
        assert "a hint was used" in text_of(response, "day-assisted")

    def test_a_voided_game_says_so(
        self, client: Client, daily: DailyDeal, make_player, submit
    ) -> None:
        from ranking.actions import game_void

        alice = make_player("alice")
        game_void(game=submit(alice, WIN_LOG))
        client.force_login(alice)
        response = client.get("/")
        assert text_of(response, "day-rank") == "–"
        assert text_of(response, "day-off-board") == (
            "A moderator voided this game: it is on no board."
        )

    @pytest.mark.parametrize(
        ("language", "played", "rank"),
        [
            ("es", "✓ Has jugado el reparto de hoy", "1 de 1 por ahora"),
            ("nl", "✓ Je hebt de kaartverdeling van vandaag gespeeld", "1 van 1 tot nu toe"),
        ],
    )
    def test_it_is_translated(
        self, client: Client, daily: DailyDeal, make_player, submit, language, played, rank
    ) -> None:
        alice = make_player("alice")
        submit(alice, WIN_LOG)
        client.force_login(alice)
        response = client.get("/", HTTP_ACCEPT_LANGUAGE=language)
        assert text_of(response, "played") == played
        assert text_of(response, "day-rank") == rank
        assert Game.objects.get().ranked
