"""Rematch: once a race is over, any of its players makes a new race for them all (the
same time limit, a fresh deal); the others hear of it on the race's socket and join
it in one click, from the finished race's page or the API."""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.base_user import AbstractBaseUser
from django.test import Client

from races import services
from races.models import Race
from tests.fixtures import WIN_LOG, client_for
from tests.races.racing import open_socket, race_for, running, store, welcomed

pytestmark = pytest.mark.django_db


@pytest.fixture
def carol(make_player: Any) -> AbstractBaseUser:
    return make_player("carol")


def won_race(alice: AbstractBaseUser, bob: AbstractBaseUser, carol: AbstractBaseUser) -> Race:
    race = running(race_for(alice, bob, carol, minutes=15))
    assert store(race, alice, WIN_LOG) == "saved"
    race.refresh_from_db()
    return race


def rematch_url(race: Race) -> str:
    return f"/api/races/{race.code}/rematch/"


def test_a_player_makes_the_rematch_and_the_others_join_it(
    alice: AbstractBaseUser, bob: AbstractBaseUser, carol: AbstractBaseUser
) -> None:
    race = won_race(alice, bob, carol)

    made = client_for(bob).post(rematch_url(race))
    joined = client_for(carol).post(rematch_url(race))
    again = client_for(bob).post(rematch_url(race))

    assert made.status_code == 201
    body = made.json()
    assert body["status"] == "lobby"
    assert body["host"] == "bob"
    assert body["time_limit_s"] == 15 * 60
    assert joined.status_code == again.status_code == 200
    assert joined.json()["code"] == again.json()["code"] == body["code"]
    assert [player["player"] for player in joined.json()["players"]] == ["bob", "carol"]
    rematch = Race.objects.get(code=body["code"])
    assert rematch.deal_number != race.deal_number
    assert client_for(alice).get(f"/api/races/{race.code}/").json()["rematch"] == rematch.code


def test_no_rematch_before_the_end_nor_for_someone_not_in_the_race(
    alice: AbstractBaseUser, bob: AbstractBaseUser, carol: AbstractBaseUser, make_player: Any
) -> None:
    race = running(race_for(alice, bob, carol))

    early = client_for(bob).post(rematch_url(race))
    store(race, alice, WIN_LOG)
    outsider = client_for(make_player("dave")).post(rematch_url(race))

    assert early.status_code == 409
    assert early.json()["error"]["code"] == "race_not_over"
    assert outsider.status_code == 403
    assert outsider.json()["error"]["code"] == "not_in_race"
    assert Race.objects.count() == 1


def test_a_rematch_whose_lobby_everyone_left_gives_way_to_a_new_one(
    alice: AbstractBaseUser, bob: AbstractBaseUser, carol: AbstractBaseUser
) -> None:
    race = won_race(alice, bob, carol)
    first, _ = services.race_rematch(player=bob, code=race.code)
    services.race_leave(player=bob, code=first.code)

    second, made = services.race_rematch(player=alice, code=race.code)

    assert made
    assert second.pk != first.pk
    assert second.host_id == alice.pk


def test_the_finished_race_page_offers_the_rematch_then_to_join_it(
    alice: AbstractBaseUser, bob: AbstractBaseUser, carol: AbstractBaseUser
) -> None:
    race = won_race(alice, bob, carol)
    page = Client()
    page.force_login(carol)

    before = page.get(f"/races/{race.code}/").content.decode()
    made = page.post(f"/races/{race.code}/rematch/")
    code = Race.objects.get(rematch_of=race).code
    bob_page = Client()
    bob_page.force_login(bob)
    after = bob_page.get(f"/races/{race.code}/").content.decode()
    bob_joins = bob_page.post(f"/races/{race.code}/rematch/")
    lobby = Client()
    lobby.force_login(carol)
    invited = lobby.get(f"/races/{code}/").content.decode()

    assert 'id="race-rematch-make">' in before
    assert 'id="race-rematch-join" hidden>' in before
    assert made.status_code == bob_joins.status_code == 302
    assert made["Location"] == bob_joins["Location"] == f"/races/{code}/"
    assert 'id="race-rematch-make" hidden>' in after
    assert 'id="race-rematch-join">' in after
    # The lobby names who of the last race has not joined yet.
    assert '<p id="race-invited"' in invited
    names = invited.split('id="race-invited"')[1].split("</p>")[0]
    assert '<span data-player="alice">alice</span>' in names
    assert "bob" not in names


@pytest.mark.django_db(transaction=True)
async def test_the_race_s_socket_tells_its_players_and_watchers_of_the_rematch(
    alice: AbstractBaseUser, bob: AbstractBaseUser, carol: AbstractBaseUser
) -> None:
    race = await database_sync_to_async(won_race)(alice, bob, carol)
    player, welcome = await welcomed(carol, race.code)
    watcher = await open_socket(None, race.code)
    watching = await watcher.receive_json_from(timeout=5)
    assert welcome["race"]["rematch"] is None
    assert watching["race"]["rematch"] is None

    rematch, _ = await database_sync_to_async(services.race_rematch)(player=bob, code=race.code)

    told = await player.receive_json_from(timeout=5)
    seen = await watcher.receive_json_from(timeout=5)
    assert told["type"] == seen["type"] == "race"
    assert told["race"]["rematch"] == seen["race"]["rematch"] == rematch.code
    await player.disconnect()
    await watcher.disconnect()
