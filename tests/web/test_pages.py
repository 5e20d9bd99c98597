"""The HTML pages: each answers, shows what it promises, and escapes what players write."""

from __future__ import annotations

import datetime
import html
import json
import re
from collections.abc import Callable

import pytest
from django.contrib.auth.base_user import AbstractBaseUser
from django.test import Client
from rest_framework.authtoken.models import Token

from games import services
from games.models import DailyDeal, Game
from games.rules import REASONS
from tests.fixtures import DEAL, WIN, WIN_LOG, play_assisted, stored_game

from .conftest import PASSWORD

pytestmark = pytest.mark.django_db

HOSTILE = '<img src=x onerror="alert(1)">&'


def page_config(response) -> dict:
    """The JSON the view rendered for the page scripts."""
    match = re.search(
        r'<script id="page-config" type="application/json">(.*?)</script>',
        response.content.decode(),
        re.S,
    )
    assert match, "the page carries no config"
    return json.loads(match.group(1))


@pytest.fixture
def hostile_player(make_player: Callable[[str], AbstractBaseUser]) -> AbstractBaseUser:
    # Django's username validator refuses "<" and ">": write the name as an admin could.
    player = make_player("mallory")
    type(player).objects.filter(pk=player.pk).update(username=HOSTILE)
    player.refresh_from_db()
    return player


def assert_escaped(response) -> None:
    body = response.content.decode()
    assert HOSTILE not in body
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;" in body


class TestHome:
    def test_it_shows_todays_deal_and_the_top_of_the_board(
        self, client: Client, daily: DailyDeal, make_player, submit
    ) -> None:
        submit(make_player("alice"), WIN_LOG)
        response = client.get("/")
        assert response.status_code == 200
        body = response.content.decode()
        assert DEAL in body
        assert "alice" in body
        assert str(WIN["score"]) in body
        config = page_config(response)
        assert config["date"] == daily.date.isoformat()
        assert config["order"] == "score"

    def test_it_shows_the_signed_in_players_rank(
        self, client: Client, daily: DailyDeal, make_player, submit
    ) -> None:
        submit(make_player("alice"), WIN_LOG)
        bob = make_player("bob")
        submit(bob, WIN_LOG[:10])
        client.force_login(bob)
        response = client.get("/")
        assert response.status_code == 200
        assert 'id="day-rank"' in response.content.decode()
        assert response.context["mine"]["rank"] == 2
        assert page_config(response)["user"] == "bob"

    def test_it_escapes_player_names(self, client: Client, daily, hostile_player, submit) -> None:
        submit(hostile_player, WIN_LOG)
        assert_escaped(client.get("/"))


class TestPlay:
    def test_it_plays_todays_deal_by_default(self, client: Client, daily: DailyDeal) -> None:
        response = client.get("/play/")
        assert response.status_code == 200
        config = page_config(response)
        assert config["deal"] == DEAL
        assert config["daily_deal"] == DEAL
        assert config["games_url"] == "/api/games/"
        assert config["hint_url"] == "/api/hint/"
        assert config["attempt_url"] == f"/api/daily/{daily.date.isoformat()}/attempt/"
        assert config["user"] is None
        assert "games/play.js" in response.content.decode()

    def test_it_tells_the_page_whether_the_players_attempt_is_started(
        self, client: Client, daily: DailyDeal, make_player
    ) -> None:
        assert page_config(client.get("/play/"))["attempt_started"] is False
        alice = make_player("alice")
        client.force_login(alice)
        # None yet: the page does not ask the API, which would answer 404.
        assert page_config(client.get("/play/"))["attempt_started"] is False
        services.attempt_start(player=alice, date=daily.date)
        assert page_config(client.get("/play/"))["attempt_started"] is True
        # Another deal is practice: no attempt to read.
        other = client.get("/play/", {"deal": "EH1-N-AAAAAAF"})
        assert page_config(other)["attempt_started"] is False

    def test_it_opens_any_deal_by_code(self, client: Client, daily: DailyDeal) -> None:
        response = client.get("/play/", {"deal": "  eh1-n-aaaaaaf "})
        assert response.status_code == 200
        assert page_config(response)["deal"] == "EH1-N-AAAAAAF"
        assert response.context["is_daily"] is False

    def test_it_refuses_a_bad_code_and_says_why_escaped(
        self, client: Client, daily: DailyDeal
    ) -> None:
        response = client.get("/play/", {"deal": "EH1-N-<b>x</b>"})
        assert response.status_code == 400
        body = response.content.decode()
        assert 'role="alert"' in body
        assert "<b>x</b>" not in body
        # Not today's deal instead (its ranked attempt would start): no deal at all.
        assert "deal" not in page_config(response)
        assert DEAL not in body

    def test_it_translates_every_reason_code_of_the_engine(
        self, client: Client, daily: DailyDeal
    ) -> None:
        reasons = page_config(client.get("/play/"))["strings"]["reasons"]
        # The engine's own texts, one source for the pages, the browser
        # (reasons.js, tests/games/rules/test_catalogue.py) and the API.
        assert reasons == REASONS

    @pytest.mark.parametrize(
        ("language", "undo", "reason"),
        [
            ("es", "Deshacer", "ninguna fundación acepta {card}"),
            ("nl", "Ongedaan maken", "geen enkel fundament neemt {card} aan"),
        ],
    )
    def test_it_speaks_spanish_and_dutch(
        self, client: Client, daily: DailyDeal, language: str, undo: str, reason: str
    ) -> None:
        response = client.get("/play/", HTTP_ACCEPT_LANGUAGE=language)
        assert response.status_code == 200
        assert f'<html lang="{language}">' in response.content.decode()
        assert undo in response.content.decode()
        config = page_config(response)
        assert config["language"] == language
        assert config["strings"]["reasons"]["no_foundation_accepts"] == reason

    @pytest.mark.parametrize("language", ["es", "nl"])
    def test_every_string_of_the_scripts_is_translated(
        self, client: Client, daily: DailyDeal, language: str
    ) -> None:
        english = page_config(client.get("/play/", HTTP_ACCEPT_LANGUAGE="en"))["strings"]
        other = page_config(client.get("/play/", HTTP_ACCEPT_LANGUAGE=language))["strings"]
        for code, text in english["reasons"].items():
            assert other["reasons"][code] != text, code
            # The fields the page fills in survive translation.
            assert set(re.findall(r"\{\w+\}", other["reasons"][code])) == set(
                re.findall(r"\{\w+\}", text)
            ), code
        same = {key for key, text in english.items() if other[key] == text}
        # Words that read the same in the language itself ("Live" is Dutch too);
        # a pattern of fields only ("{card}, {place}"); Spanish cards print the
        # English letters.
        assert same <= {"live", "watch_live", "score", "card_at", "rank_letters"}, same
        assert other["rank_letters"] != english["rank_letters"] or language == "es"


class TestLeaderboard:
    def test_it_shows_the_board_by_score_and_by_moves(
        self, client: Client, daily: DailyDeal, make_player, submit
    ) -> None:
        submit(make_player("alice"), WIN_LOG)
        submit(make_player("bob"), WIN_LOG[:10])
        by_score = client.get("/leaderboard/")
        assert by_score.status_code == 200
        assert [e["player"] for e in by_score.context["page"]["entries"]] == ["alice", "bob"]
        # Each ranked game's duration, as a clock shows it.
        alice_row = re.search(r'<tr class="">.*?alice.*?</tr>', by_score.content.decode(), re.S)
        assert alice_row is not None
        assert re.search(r'<td class="num" data-label="Time">\d+:\d\d</td>', alice_row.group(0))
        assert "Players: <span data-total>2</span>" in by_score.content.decode()
        by_moves = client.get("/leaderboard/", {"order": "moves"})
        # Only won games are on the moves board, and it says so.
        assert [e["player"] for e in by_moves.context["page"]["entries"]] == ["alice"]
        assert "Won games: <span data-total>1</span>" in by_moves.content.decode()
        assert page_config(by_moves)["order"] == "moves"

    def test_it_highlights_the_players_row_and_shows_around_me(
        self, client: Client, daily: DailyDeal, make_player, submit
    ) -> None:
        bob = make_player("bob")
        submit(make_player("alice"), WIN_LOG)
        submit(bob, WIN_LOG[:10])
        client.force_login(bob)
        response = client.get("/leaderboard/")
        body = response.content.decode()
        assert re.search(r'<tr class="mine">\s*<td class="num rank" data-label="Rank">2</td>', body)
        assert [e["player"] for e in response.context["around"]] == ["alice", "bob"]
        assert 'id="my-rank"' in body
        # The whole board is on the page already: no second copy of it "around me".
        assert "Around me" not in body and "data-around" not in body

    def test_it_shows_a_past_day_and_refuses_a_future_one(
        self, client: Client, daily: DailyDeal, today: datetime.date
    ) -> None:
        yesterday = today - datetime.timedelta(days=1)
        DailyDeal.objects.create(date=yesterday, number=77)
        past = client.get(f"/leaderboard/{yesterday.isoformat()}/")
        assert past.status_code == 200
        assert past.context["deal_code"] == "EH1-N-AAAAACZ"
        assert past.context["next_day"] == today
        future = today + datetime.timedelta(days=1)
        assert client.get(f"/leaderboard/{future.isoformat()}/").status_code == 404
        assert client.get("/leaderboard/not-a-day/").status_code == 404

    def test_it_escapes_player_names(self, client: Client, daily, hostile_player, submit) -> None:
        submit(hostile_player, WIN_LOG)
        assert_escaped(client.get("/leaderboard/"))


class TestPar:
    """The day's par (the solver's move count) is shown with the board, and only then."""

    @staticmethod
    def par_text(response) -> str | None:
        body = response.content.decode()
        match = re.search(r'<span class="par" id="par"[^>]*>(.*?)</span>', body)
        return html.unescape(match.group(1)) if match else None

    def test_home_leaderboard_and_play_show_the_days_par(
        self, client: Client, daily: DailyDeal
    ) -> None:
        DailyDeal.objects.filter(pk=daily.pk).update(par=312)
        for path in ["/", "/leaderboard/", f"/leaderboard/{daily.date.isoformat()}/", "/play/"]:
            assert self.par_text(client.get(path)) == "Par: 312 moves — the solver's win", path

    def test_nothing_is_shown_when_the_par_is_unknown(
        self, client: Client, daily: DailyDeal
    ) -> None:
        assert daily.par is None
        for path in ["/", "/leaderboard/", "/play/"]:
            response = client.get(path)
            assert response.status_code == 200
            assert 'id="par"' not in response.content.decode(), path

    def test_the_play_page_shows_the_par_only_for_the_deal_of_the_day(
        self, client: Client, daily: DailyDeal
    ) -> None:
        DailyDeal.objects.filter(pk=daily.pk).update(par=312)
        assert self.par_text(client.get("/play/", {"deal": DEAL})) is not None
        assert self.par_text(client.get("/play/", {"deal": "EH1-N-AAAAAAF"})) is None

    def test_a_past_day_shows_its_own_par(
        self, client: Client, daily: DailyDeal, today: datetime.date
    ) -> None:
        DailyDeal.objects.filter(pk=daily.pk).update(par=312)
        yesterday = today - datetime.timedelta(days=1)
        DailyDeal.objects.create(date=yesterday, number=77, par=1)
        text = self.par_text(client.get(f"/leaderboard/{yesterday.isoformat()}/"))
        assert text == "Par: 1 move — the solver's win"

    @pytest.mark.parametrize(
        ("language", "line"),
        [
            ("es", "Par: 312 jugadas, las de la victoria del solucionador"),
            ("nl", "Par: 312 zetten — de winst van de oplosser"),
        ],
    )
    def test_it_is_translated(
        self, client: Client, daily: DailyDeal, language: str, line: str
    ) -> None:
        DailyDeal.objects.filter(pk=daily.pk).update(par=312)
        assert self.par_text(client.get("/", HTTP_ACCEPT_LANGUAGE=language)) == line


class TestReplay:
    def test_it_shows_a_game_and_where_its_replay_is(
        self, client: Client, daily: DailyDeal, make_player, submit
    ) -> None:
        game = submit(make_player("alice"), WIN_LOG)
        client.force_login(game.player)  # her own replay: the day still runs
        response = client.get(f"/replays/{game.pk}/")
        assert response.status_code == 200
        assert page_config(response)["replay_url"] == f"/api/games/{game.pk}/replay/"
        assert "alice" in response.content.decode()
        # The replay the page reads is there: the deal's table and a step per action.
        replay = client.get(f"/api/games/{game.pk}/replay/").json()
        assert replay["start"]["deal"] == game.deal_code
        assert len(replay["steps"]) == len(WIN_LOG)

    @staticmethod
    def facts(response) -> dict[str, str]:
        """The replay's facts, by their element's id (`fact-rank`), as text."""
        body = response.content.decode()
        found = re.findall(r'<dd id="fact-(\w+)"[^>]*>(.*?)</dd>', body, flags=re.S)
        return {name: html.unescape(re.sub(r"<[^>]+>", " ", text)).split() for name, text in found}

    def test_it_says_the_day_the_player_the_rank_so_far_and_the_time_of_a_ranked_game(
        self, client: Client, daily: DailyDeal, make_player, submit
    ) -> None:
        submit(make_player("bob"), WIN_LOG)
        game = submit(make_player("alice"), WIN_LOG[:40])
        Game.objects.filter(pk=game.pk).update(duration_ms=(4 * 60 + 7) * 1000)
        client.force_login(game.player)
        facts = self.facts(client.get(f"/replays/{game.pk}/"))
        assert facts == {
            "player": ["alice"],
            "date": [daily.date.isoformat()],
            "kind": ["Ranked"],
            "rank": ["2", "of", "2", "so", "far"],
            "time": ["4:07"],
        }

    def test_it_says_a_practice_game_has_no_rank_and_a_closed_day_gives_the_final_rank(
        self, client: Client, daily: DailyDeal, make_player
    ) -> None:
        from leaderboards.services import day_close

        yesterday = DailyDeal.objects.create(
            date=daily.date - datetime.timedelta(days=1), number=7, par=120
        )
        alice, bob = make_player("alice"), make_player("bob")
        ranked = stored_game(
            player=alice, daily=yesterday, score=60, moves=130, won=True, duration_ms=95_000
        )
        stored_game(player=bob, daily=yesterday, score=80, moves=125, won=True)
        practice = stored_game(player=alice, daily=yesterday, score=20, moves=40, ranked=False)
        day_close(date=yesterday.date)
        facts = self.facts(client.get(f"/replays/{practice.pk}/", HTTP_ACCEPT_LANGUAGE="es"))
        assert facts["kind"] == ["Práctica"] and facts["rank"] == ["–"]
        assert facts["time"] == ["–"]
        facts = self.facts(client.get(f"/replays/{ranked.pk}/", HTTP_ACCEPT_LANGUAGE="nl"))
        assert facts["kind"] == ["Officieel"]
        assert facts["rank"] == ["2", "van", "2", "definitief"]
        assert facts["date"] == [yesterday.date.isoformat()]
        assert facts["time"] == ["1:35"]

    def test_it_is_404_for_an_unknown_game(self, client: Client, db: None) -> None:
        assert client.get("/replays/999999/").status_code == 404

    @pytest.mark.parametrize(
        ("language", "note"),
        [
            ("en", "Assisted: a hint was used, so this game is on no board."),
            ("es", "Con ayuda: se usó una pista"),
            ("nl", "Met hulp: er is een tip gebruikt"),
        ],
    )
    def test_it_says_a_game_was_assisted(
        self, client: Client, daily: DailyDeal, make_player, submit, language: str, note: str
    ) -> None:
        game = play_assisted(make_player("alice"), WIN_LOG)
        bob = make_player("bob")
        unassisted = submit(bob, WIN_LOG)
        client.force_login(bob)  # bob has played the day: its replays are open to him
        body = client.get(f"/replays/{game.pk}/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
        assert 'id="assisted-mark"' in body
        (said,) = re.findall(r'<p id="assisted-note">(.*?)</p>', body)
        assert note in html.unescape(said)
        body = client.get(f"/replays/{unassisted.pk}/").content.decode()
        assert 'id="assisted-mark"' not in body and 'id="assisted-note"' not in body

    def test_it_escapes_player_names(self, client: Client, daily, hostile_player, submit) -> None:
        game = submit(hostile_player, WIN_LOG)
        assert_escaped(client.get(f"/replays/{game.pk}/"))


class TestPlayer:
    def test_it_lists_daily_results_and_games(
        self, client: Client, daily: DailyDeal, make_player, submit
    ) -> None:
        alice = make_player("alice")
        game = submit(alice, WIN_LOG)
        client.force_login(alice)  # her own page: the running day's replays are hers to see
        response = client.get("/players/alice/")
        assert response.status_code == 200
        body = response.content.decode()
        assert f"/replays/{game.pk}/" in body
        assert response.context["days"][0]["score"]["rank"] == 1
        assert list(response.context["games"]) == [game]

    def test_it_marks_ranked_and_practice_games_with_their_time(
        self, client: Client, daily: DailyDeal, make_player, submit
    ) -> None:
        alice = make_player("alice")
        ranked = submit(alice, WIN_LOG)
        Game.objects.filter(pk=ranked.pk).update(duration_ms=(4 * 60 + 7) * 1000)
        submit(alice, WIN_LOG[:10])  # the attempt is closed: practice
        client.force_login(alice)
        body = client.get("/players/alice/").content.decode()
        rows = re.findall(r"<tr>.*?</tr>", body, flags=re.S)
        games = [row for row in rows if "/replays/" in row]
        assert "practice" in games[0] and "ranked" not in games[0]
        assert "ranked" in games[1] and "4:07" in games[1]

    def test_it_lists_an_assisted_day_without_rank_and_marks_its_game(
        self, client: Client, daily: DailyDeal, make_player, submit
    ) -> None:
        submit(make_player("bob"), WIN_LOG)
        play_assisted(make_player("alice"), WIN_LOG)
        body = client.get("/players/alice/").content.decode()
        results = body.split('id="daily-results"')[1].split("</table>")[0]
        (day,) = re.findall(r"<tr>.*?</tr>", results.split("<tbody>")[1], flags=re.S)
        assert daily.date.isoformat() in day and DEAL in day
        assert "assisted: on no board" in day
        # No rank and no score on a board: the number cells are empty.
        assert re.findall(r'<td class="num"[^>]*>(.*?)</td>', day) == [""] * 4
        games = body.split('id="player-games"')[1]
        assert "ranked, assisted" in games
        spanish = client.get("/players/alice/", HTTP_ACCEPT_LANGUAGE="es").content.decode()
        assert "con ayuda: en ninguna clasificación" in spanish

    def test_it_is_404_for_an_unknown_player(self, client: Client, db: None) -> None:
        assert client.get("/players/nobody/").status_code == 404

    def test_it_escapes_the_players_name(self, client: Client, daily, hostile_player) -> None:
        response = client.get(f"/players/{HOSTILE}/")
        assert response.status_code == 200
        assert_escaped(response)


class TestRules:
    @pytest.mark.parametrize(
        ("language", "title"),
        [
            ("en", "Easy Harp: the rules"),
            ("es", "Easy Harp: las reglas"),
            ("nl", "Easy Harp: de regels"),
        ],
    )
    def test_it_is_written_in_each_language(self, client: Client, db: None, language, title):
        response = client.get("/rules/", HTTP_ACCEPT_LANGUAGE=language)
        assert response.status_code == 200
        assert f"<h1>{title}</h1>" in response.content.decode()


class TestAccounts:
    def test_sign_up_signs_in_and_goes_back_to_the_game(
        self, client: Client, daily: DailyDeal
    ) -> None:
        response = client.post(
            "/accounts/signup/",
            {
                "username": "carol",
                "password1": PASSWORD,
                "password2": PASSWORD,
                "next": "/play/?deal=EH1-N-AAAAAAF",
            },
        )
        assert response.status_code == 302
        assert response["Location"] == "/play/?deal=EH1-N-AAAAAAF"
        assert page_config(client.get("/play/"))["user"] == "carol"
        # The same player as the API's sign-up makes: with an API token.
        assert Token.objects.filter(user__username="carol").exists()

    def test_sign_up_refuses_a_name_taken_in_another_case(
        self, client: Client, db: None, make_player
    ) -> None:
        make_player("Alice")
        response = client.post(
            "/accounts/signup/", {"username": "alice", "password1": PASSWORD, "password2": PASSWORD}
        )
        assert response.status_code == 200
        assert response.context["form"].errors
        assert 'class="errorlist' in response.content.decode()

    def test_sign_up_refuses_a_weak_password_and_a_foreign_next(
        self, client: Client, db: None
    ) -> None:
        weak = client.post(
            "/accounts/signup/", {"username": "carol", "password1": "123", "password2": "123"}
        )
        assert weak.status_code == 200
        # Said under the password itself, not under "the same again".
        errors = weak.context["form"].errors
        assert "password1" in errors and "password2" not in errors, errors
        field = re.search(r'<input[^>]*name="password1"[^>]*>', weak.content.decode())
        assert field and 'aria-invalid="true"' in field.group(0), field
        foreign = client.post(
            "/accounts/signup/",
            {
                "username": "dave",
                "password1": PASSWORD,
                "password2": PASSWORD,
                "next": "https://evil.example/",
            },
        )
        assert foreign["Location"] == "/"

    def test_log_in_and_log_out(self, client: Client, daily: DailyDeal, make_player) -> None:
        make_player("alice")
        assert client.get("/accounts/login/").status_code == 200
        response = client.post(
            "/accounts/login/", {"username": "alice", "password": PASSWORD, "next": "/play/"}
        )
        assert response.status_code == 302
        assert response["Location"] == "/play/"
        assert page_config(client.get("/play/"))["user"] == "alice"
        assert client.post("/accounts/logout/").status_code == 302
        assert page_config(client.get("/play/"))["user"] is None

    def test_the_language_switch_sets_the_language(self, client: Client, daily) -> None:
        response = client.post("/i18n/setlang/", {"language": "nl", "next": "/play/"})
        assert response.status_code == 302
        assert page_config(client.get("/play/"))["language"] == "nl"


def test_game_model_is_what_the_pages_read(daily: DailyDeal, make_player, submit) -> None:
    game = submit(make_player("alice"), WIN_LOG)
    assert Game.objects.get(pk=game.pk).won is True
