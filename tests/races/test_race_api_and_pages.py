"""The races API (create, list, read, join, start, leave) and the races' pages: the
races page, a race's lobby, play view and results, and a player's races."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.contrib.auth.base_user import AbstractBaseUser
from django.test import Client

from races.models import Race, Racer
from tests.fixtures import WIN_LOG, client_for
from tests.races.racing import race_for, racer, running, store

pytestmark = pytest.mark.django_db


def signed_in(player: AbstractBaseUser, language: str = "en") -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(player)
    return client


# --- The API ---------------------------------------------------------------------------


def test_a_race_is_created_joined_started_and_read_through_the_api(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    created = client_for(alice).post("/api/races/", {"minutes": 5}, format="json")
    assert created.status_code == 201, created.json()
    code = created.json()["code"]
    assert created.json()["url"] == f"/races/{code}/"
    assert (created.json()["status"], created.json()["time_limit_s"]) == ("lobby", 300)

    joined = client_for(bob).post(f"/api/races/{code}/join/")
    assert [p["player"] for p in joined.json()["players"]] == ["alice", "bob"]
    refused = client_for(bob).post(f"/api/races/{code}/start/")
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "not_host")
    started = client_for(alice).post(f"/api/races/{code}/start/")
    assert started.json()["status"] == "countdown" and started.json()["deal"]

    read = client_for(None).get(f"/api/races/{code}/")
    assert read.status_code == 200 and read.json()["host"] == "alice"
    mine = client_for(bob).get("/api/races/")
    assert [race["code"] for race in mine.json()] == [code]
    left = client_for(bob).post(f"/api/races/{code}/leave/")
    assert {p["player"]: p["left"] for p in left.json()["players"]}["bob"] is True


@pytest.mark.parametrize("minutes", [7, "5", 5.0, None])
def test_a_time_limit_off_the_list_is_refused_by_the_api(
    alice: AbstractBaseUser, minutes: Any
) -> None:
    answer = client_for(alice).post("/api/races/", {"minutes": minutes}, format="json")
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "invalid"
    assert not Race.objects.exists()


def test_a_full_race_refuses_the_ninth_through_the_api(make_player: Any) -> None:
    players = [make_player(f"p{i}") for i in range(9)]
    race = race_for(players[0], *players[1:8])

    answer = client_for(players[8]).post(f"/api/races/{race.code}/join/")

    assert answer.status_code == 409
    assert answer.json()["error"] == {**answer.json()["error"], "code": "race_full", "limit": 8}


def test_races_need_a_signed_in_player_and_an_unknown_code_is_not_found(
    alice: AbstractBaseUser,
) -> None:
    assert client_for(None).post("/api/races/", {"minutes": 5}, format="json").status_code == 401
    assert client_for(alice).get("/api/races/nope/").status_code == 404
    assert client_for(alice).post("/api/races/nope/join/").status_code == 404


# --- The pages -------------------------------------------------------------------------


def test_the_races_page_creates_a_race_and_lists_it(alice: AbstractBaseUser) -> None:
    page = signed_in(alice)

    created = page.post("/races/", {"minutes": "15"})

    race = Race.objects.get()
    assert created.status_code == 302 and created["Location"] == f"/races/{race.code}/"
    listed = page.get("/races/").content.decode()
    assert f"/races/{race.code}/" in listed and 'id="create-race"' in listed


def test_a_visitor_is_asked_to_sign_in_and_a_player_to_join(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = race_for(alice)

    visitor = Client().get(f"/races/{race.code}/").content.decode()
    lobby = signed_in(bob).get(f"/races/{race.code}/").content.decode()
    joined = signed_in(bob).post(f"/races/{race.code}/join/")

    # A visitor watches the lobby live (race.js over the race's socket), without the deal.
    assert 'id="race-sign-in"' in visitor and "race.js" in visitor
    assert 'id="race-join"' in lobby
    assert joined.status_code == 302 and racer(race, bob).player == bob
    host_page = signed_in(alice).get(f"/races/{race.code}/").content.decode()
    assert 'id="race-start"' in host_page and 'id="race-link"' in host_page
    assert "race.js" in host_page and 'data-player="bob"' in host_page


def test_someone_not_in_a_running_race_sees_its_progress_but_not_its_deal(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = running(race_for(alice))
    store(race, alice, WIN_LOG[:10], at_ms=100)

    watched = [Client().get(f"/races/{race.code}/"), signed_in(bob).get(f"/races/{race.code}/")]
    played = signed_in(alice).get(f"/races/{race.code}/")
    read = [
        client_for(None).get(f"/api/races/{race.code}/"),
        client_for(alice).get(f"/api/races/{race.code}/"),
    ]

    for page in watched:
        body = page.content.decode()
        assert page.context["config"]["race_state"]["deal"] is None
        assert (
            page.context["config"]["race_state"]["players"][0]["moves"] == racer(race, alice).moves
        )
        assert race.deal_code not in body and "race.js" in body
        assert re.search(r'<p id="race-closed"[^>]*>', body).group(0).count("hidden") == 0
    assert played.context["config"]["race_state"]["deal"] == race.deal_code
    assert [answer.json()["deal"] for answer in read] == [None, race.deal_code]


def test_the_lobby_says_nobody_joins_once_started_only_when_it_has(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = race_for(alice)

    body = signed_in(bob).get(f"/races/{race.code}/").content.decode()

    assert re.search(r'<p id="race-closed"[^>]*\bhidden\b', body)
    assert 'id="race-join"' in body


def test_the_deal_is_anyones_once_the_race_is_over(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = running(race_for(alice))
    store(race, alice, WIN_LOG, at_ms=900)

    assert client_for(None).get(f"/api/races/{race.code}/").json()["deal"] == race.deal_code


def test_the_ninth_player_is_told_the_race_is_full(make_player: Any) -> None:
    players = [make_player(f"p{i}") for i in range(9)]
    race = race_for(players[0], *players[1:8])

    page = signed_in(players[8]).get(f"/races/{race.code}/").content.decode()
    tried = signed_in(players[8]).post(f"/races/{race.code}/join/", follow=True)

    assert 'id="race-full"' in page and 'id="race-join"' not in page
    assert "8 players already" in tried.content.decode()
    assert not Racer.objects.filter(race=race, player=players[8]).exists()


@pytest.mark.parametrize(
    ("language", "results", "won"),
    [("en", "Results", "won the race!"), ("es", "Resultados", "ha ganado la carrera"),
     ("nl", "Uitslag", "heeft de race gewonnen")],
)  # fmt: skip
def test_the_results_list_each_player_with_a_replay_in_the_players_language(
    alice: AbstractBaseUser, bob: AbstractBaseUser, language: str, results: str, won: str
) -> None:
    race = running(race_for(alice, bob))
    store(race, bob, WIN_LOG[:30], at_ms=500)
    store(race, alice, WIN_LOG, at_ms=900)

    page = signed_in(bob, language).get(f"/races/{race.code}/").content.decode()

    games = [racer(race, alice).game_id, racer(race, bob).game_id]
    assert results in page and won in page
    assert all(f"/replays/{game}/" in page for game in games)
    assert "race.js" not in page


def test_a_players_races_page_lists_their_finished_races_and_is_linked_from_their_page(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    finished = running(race_for(alice, bob))
    store(finished, alice, WIN_LOG, at_ms=900)
    waiting = race_for(bob)

    page = Client().get("/races/players/bob/").content.decode()
    player_page = Client().get("/players/bob/").content.decode()

    assert f"/races/{finished.code}/" in page and f"/races/{waiting.code}/" not in page
    assert f"/replays/{racer(finished, bob).game_id}/" not in page  # bob never played
    assert "/races/players/bob/" in player_page


# --- A race's games on their replay page ------------------------------------------------


def replay_fact(page: str, name: str) -> str:
    """The text of the replay's fact `name` (`fact-kind`), tags stripped, spaces joined."""
    found = re.search(rf'<dd id="fact-{name}"[^>]*>(.*?)</dd>', page, flags=re.S)
    assert found is not None, name
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", found.group(1))).split())


@pytest.mark.parametrize(
    ("language", "kind", "place"),
    [("en", "Race", "2 of 2 final"), ("es", "Carrera", "2 de 2 definitivo"),
     ("nl", "Race", "2 van 2 definitief")],
)  # fmt: skip
def test_a_race_games_replay_says_it_was_a_race_with_a_link_and_the_players_place(
    alice: AbstractBaseUser, bob: AbstractBaseUser, language: str, kind: str, place: str
) -> None:
    race = running(race_for(alice, bob))
    store(race, bob, WIN_LOG[:30], at_ms=500)
    store(race, alice, WIN_LOG, at_ms=900)
    game = racer(race, bob).game_id

    page = Client(HTTP_ACCEPT_LANGUAGE=language).get(f"/replays/{game}/").content.decode()

    assert 'data-kind="race"' in page
    assert replay_fact(page, "kind") == kind
    assert f'<a href="/races/{race.code}/">' in page
    assert replay_fact(page, "rank") == place


def _race_won_by_alice(alice: AbstractBaseUser, bob: AbstractBaseUser) -> Race:
    """A race that ended on Alice's win, with Bob's game of it stored."""
    race = running(race_for(alice, bob))
    store(race, bob, WIN_LOG[:30], at_ms=500)
    store(race, alice, WIN_LOG, at_ms=900)
    return race


@pytest.mark.parametrize(("language", "label"), [("en", "Race"), ("es", "Carrera"), ("nl", "Race")])
def test_the_players_page_lists_a_race_game_as_the_races_with_a_link(
    alice: AbstractBaseUser, bob: AbstractBaseUser, language: str, label: str
) -> None:
    race = _race_won_by_alice(alice, bob)

    page = signed_in(bob, language).get("/players/bob/").content.decode()

    games = re.search(r'<table[^>]*id="player-games".*?</table>', page, flags=re.S)
    assert games is not None
    assert f'<a class="badge" href="/races/{race.code}/">{label}</a>' in games.group(0)
    assert "practice" not in games.group(0) and "práctica" not in games.group(0)


def test_the_players_page_reads_its_games_origins_at_once(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = signed_in(bob)
    _race_won_by_alice(alice, bob)
    with CaptureQueriesContext(connection) as one_race:
        client.get("/players/bob/")
    for _ in range(3):
        _race_won_by_alice(alice, bob)

    with CaptureQueriesContext(connection) as four_races:
        page = client.get("/players/bob/").content.decode()

    assert page.count('class="badge" href="/races/') == 4
    assert len(four_races.captured_queries) == len(one_race.captured_queries)


@pytest.mark.parametrize(
    ("language", "removed", "left"), [("en", "removed", "left"), ("es", "expulsado", "se fue")]
)
def test_a_player_put_out_by_a_ban_shows_as_removed_and_one_who_left_as_left(
    alice: AbstractBaseUser, bob: AbstractBaseUser, make_player: Any, language: str, removed, left
) -> None:
    carol = make_player("carol")
    race = running(race_for(alice, bob, carol))
    Racer.objects.filter(race=race, player=bob).update(left_at=race.starts_at, banned=True)
    Racer.objects.filter(race=race, player=carol).update(left_at=race.starts_at)

    page = Client(headers={"accept-language": language}).get(f"/races/{race.code}/")
    body = page.content.decode()
    answer = client_for(None).get(f"/api/races/{race.code}/").json()

    badges = {
        name: re.findall(r'<span class="badge">([^<]*)</span>', item)
        for name, item in re.findall(
            r'<li class="racer" data-player="(\w+)"[^>]*>(.*?)</li>', body, re.S
        )
    }
    assert (badges["bob"], badges["carol"]) == ([removed], [left])
    assert removed not in badges["alice"] and left not in badges["alice"]
    assert {p["player"]: (p["left"], p["removed"]) for p in answer["players"]} == {
        "alice": (False, False),
        "bob": (True, True),
        "carol": (True, False),
    }
