"""Every word a page says in the visitor's language: the reasons of the 404
pages, the engine's refusal of a bad deal code, the password errors (in the
informal "tú" in Spanish, "je" in Dutch) and the FAQ as the rules stand."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from games.models import DailyDeal
from leagues.services import league_create

from .conftest import PASSWORD

pytestmark = pytest.mark.django_db

# Django's own Spanish for these forms addresses the player as "usted".
USTED = re.compile(r"\b(Su|su|introduzca|vuelva|Introduzca|Vuelva|usted)\b")


def text_of(response) -> str:
    """The page's text, tags and scripts left out."""
    body = re.sub(r"<script.*?</script>", " ", response.content.decode(), flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def reason_of(response) -> str:
    """The reason a 404 page gives, under its heading."""
    (reason,) = re.findall(r"</h1>\s*<p>(.*?)</p>", response.content.decode(), flags=re.S)
    return html.unescape(reason.strip())


class TestNotFoundPages:
    @pytest.mark.parametrize(
        ("language", "reason"),
        [
            ("en", "There is no game 999999."),
            ("es", "No existe la partida 999999."),
            ("nl", "Er is geen spel 999999."),
        ],
    )
    def test_a_missing_game_is_said_in_the_visitors_language(
        self, client: Client, db: None, language: str, reason: str
    ) -> None:
        response = client.get("/replays/999999/", HTTP_ACCEPT_LANGUAGE=language)
        assert response.status_code == 404
        assert reason_of(response) == reason

    def test_a_missing_player_is_said_in_spanish_and_a_day_to_come_in_english_by_the_api(
        self, client: Client, daily: DailyDeal
    ) -> None:
        response = client.get("/players/nobody/", HTTP_ACCEPT_LANGUAGE="es")
        assert reason_of(response) == "No existe el jugador 'nobody'."
        response = client.get("/api/daily/2999-01-01/", HTTP_ACCEPT_LANGUAGE="es")
        assert response.json()["error"]["message"] == (
            "The deal of 2999-01-01 is not served before that day."
        )

    def test_a_league_the_player_is_not_in_is_said_in_dutch(
        self, client: Client, daily: DailyDeal, make_player
    ) -> None:
        league = league_create(owner=make_player("alice"), name="Thursday club")
        client.force_login(make_player("bob"))
        response = client.get(f"/leagues/{league.slug}/", HTTP_ACCEPT_LANGUAGE="nl")
        assert response.status_code == 404
        assert reason_of(response) == "Die competitie bestaat niet."

    def test_the_api_still_says_it_in_english_with_its_code(self, client: Client, db: None) -> None:
        body = client.get("/api/games/999999/", HTTP_ACCEPT_LANGUAGE="es").json()
        assert body["error"] == {"code": "not_found", "message": "There is no game 999999."}
        body = client.get("/api/deals/EH1-X-AAAAAAB/", HTTP_ACCEPT_LANGUAGE="nl").json()
        assert body["error"]["code"] == "invalid_deal"
        assert body["error"]["message"] == (
            "unknown deal variant 'X' in 'EH1-X-AAAAAAB': EH1 codes use \"N\""
        )


class TestBadDealCode:
    @pytest.mark.parametrize(
        ("language", "said"),
        [
            ("en", "That is not a deal code: a deal code has 7 letters after \"EH1-N-\", "
             "'EH1-N-AAAB' has 4."),
            ("es", "Eso no es un código de reparto: un código de reparto tiene 7 letras "
             "después de \"EH1-N-\", 'EH1-N-AAAB' tiene 4."),
            ("nl", "Dat is geen kaartverdelingscode: een kaartverdelingscode heeft 7 letters "
             "na \"EH1-N-\", 'EH1-N-AAAB' heeft er 4."),
        ],
    )  # fmt: skip
    def test_the_play_page_says_why_in_the_players_language(
        self, client: Client, daily: DailyDeal, language: str, said: str
    ) -> None:
        response = client.get("/play/?deal=EH1-N-AAAB", HTTP_ACCEPT_LANGUAGE=language)
        assert response.status_code == 400
        (alert,) = re.findall(r'<p class="error" role="alert">(.*?)</p>', response.content.decode())
        assert " ".join(html.unescape(alert).split()) == said

    @pytest.mark.parametrize(
        ("language", "said"),
        [
            ("en", "That is not a deal code: 'XYZ' does not start with \"EH1-N-\", as every "
             "deal code does."),
            ("es", "Eso no es un código de reparto: 'XYZ' no empieza por \"EH1-N-\", como todo "
             "código de reparto."),
            ("nl", "Dat is geen kaartverdelingscode: 'XYZ' begint niet met \"EH1-N-\", zoals "
             "elke kaartverdelingscode."),
        ],
    )  # fmt: skip
    def test_a_wrong_prefix_is_said_in_a_whole_sentence(
        self, client: Client, daily: DailyDeal, language: str, said: str
    ) -> None:
        response = client.get("/play/?deal=XYZ", HTTP_ACCEPT_LANGUAGE=language)
        assert response.status_code == 400
        (alert,) = re.findall(r'<p class="error" role="alert">(.*?)</p>', response.content.decode())
        assert " ".join(html.unescape(alert).split()) == said

    @pytest.mark.parametrize("language", ["en", "es", "nl"])
    def test_a_bad_code_offers_the_days_deal_and_plays_nothing(
        self, client: Client, daily: DailyDeal, language: str
    ) -> None:
        response = client.get("/play/?deal=EH1-N-AAAAAF", HTTP_ACCEPT_LANGUAGE=language)
        page = response.content.decode()
        assert response.status_code == 400
        # A link to the day's deal, and no game: no table, no play script, no deal.
        assert re.search(r'<a class="button primary" id="open-daily" href="/play/">', page)
        assert 'id="table"' not in page and "play.js" not in page
        assert daily.deal_code not in page
        assert 'value="EH1-N-AAAAAF"' in page


class TestPasswordErrors:
    def test_sign_up_says_a_weak_password_with_tu_in_spanish(
        self, client: Client, db: None
    ) -> None:
        page = client.get("/accounts/signup/", HTTP_ACCEPT_LANGUAGE="es")
        assert "Usa al menos 8 caracteres." in text_of(page)
        assert "Escribe otra vez la misma contraseña, para asegurarte." in text_of(page)
        assert USTED.findall(text_of(page)) == []
        weak = client.post(
            "/accounts/signup/",
            {"username": "carol", "password1": "1234", "password2": "1234"},
            HTTP_ACCEPT_LANGUAGE="es",
        )
        said = text_of(weak)
        assert "Tu contraseña es demasiado corta: usa al menos 8 caracteres." in said
        assert "Tu contraseña es de las más comunes; elige otra." in said
        assert "Tu contraseña solo tiene cifras; añade letras u otros caracteres." in said
        assert USTED.findall(said) == []
        mismatch = client.post(
            "/accounts/signup/",
            {"username": "carol", "password1": PASSWORD, "password2": PASSWORD + "x"},
            HTTP_ACCEPT_LANGUAGE="es",
        )
        assert "Las dos contraseñas que escribiste no son iguales." in text_of(mismatch)

    def test_a_password_like_the_name_is_refused_in_dutch(self, client: Client, db: None) -> None:
        close = client.post(
            "/accounts/signup/",
            {"username": "harpplayer", "password1": "harpplayer1", "password2": "harpplayer1"},
            HTTP_ACCEPT_LANGUAGE="nl",
        )
        assert "Je wachtwoord lijkt te veel op je gebruikersnaam." in text_of(close)

    def test_a_wrong_current_password_is_said_with_tu(self, client: Client, make_player) -> None:
        client.force_login(make_player("alice"))
        response = client.post(
            "/accounts/password/change/",
            {"old_password": "not it", "new_password1": PASSWORD, "new_password2": PASSWORD},
            HTTP_ACCEPT_LANGUAGE="es",
        )
        assert response.status_code == 200
        said = text_of(response)
        assert "Tu contraseña actual no es correcta; escríbela de nuevo." in said
        assert USTED.findall(said) == []

    def test_a_failed_log_in_is_said_with_tu(self, client: Client, make_player) -> None:
        make_player("alice")
        response = client.post(
            "/accounts/login/",
            {"username": "alice", "password": "not it"},
            HTTP_ACCEPT_LANGUAGE="es",
        )
        assert response.status_code == 200
        said = text_of(response)
        assert "Ese nombre y esa contraseña no corresponden a ninguna cuenta." in said
        assert USTED.findall(said) == []

    @pytest.mark.parametrize(
        ("language", "help_text"),
        [
            ("es", "Hasta 150 caracteres: solo letras, dígitos y @ . + - _."),
            ("nl", "Hoogstens 150 tekens: alleen letters, cijfers en @ . + - _."),
        ],
    )
    def test_the_sign_up_form_says_what_a_name_may_hold(
        self, client: Client, db: None, language: str, help_text: str
    ) -> None:
        said = text_of(client.get("/accounts/signup/", HTTP_ACCEPT_LANGUAGE=language))
        assert help_text in said
        assert "carácteres" not in said and USTED.findall(said) == []


class TestFaq:
    def test_it_breaks_ties_on_time_and_gives_one_ranked_attempt_a_day(
        self, client: Client, db: None
    ) -> None:
        said = text_of(client.get("/faq/"))
        assert "then the fewer moves, then the shorter time" in said
        assert "then the higher score, then the shorter time" in said
        assert "one ranked attempt a day" in said
        assert "strictly better" not in said  # from before the one-attempt rule
        assert "once you have finished your ranked game of that day" in said

    @pytest.mark.parametrize(
        ("language", "words"),
        [("es", "luego el tiempo más corto"), ("nl", "dan de kortste tijd")],
    )
    def test_it_is_translated(self, client: Client, db: None, language: str, words: str) -> None:
        said = text_of(client.get("/faq/", HTTP_ACCEPT_LANGUAGE=language))
        assert words in said

    @pytest.mark.parametrize(
        ("language", "words"),
        [
            ("en", "never after you have started your ranked game"),
            ("es", "nunca después de que hayas empezado tu partida clasificatoria"),
            ("nl", "nooit nadat je aan je officiële poging begonnen bent"),
        ],
    )
    def test_it_says_when_a_reminder_comes(
        self, client: Client, db: None, language: str, words: str
    ) -> None:
        said = text_of(client.get("/faq/", HTTP_ACCEPT_LANGUAGE=language))
        assert words in said
