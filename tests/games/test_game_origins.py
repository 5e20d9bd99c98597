"""A game of no day names what it was played in as the read the site's wiring hands the
board pages says (`games.origins`, `leaderboards.urls.board_urls`: the races' read);
games imports no app above it, and a game of a day is never asked."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import resolve

from games import origins
from games.models import Game
from games.services import game_store
from races.selectors import race_game_origins
from tests.fixtures import DEAL, WIN_LOG, client_for, submit

pytestmark = pytest.mark.django_db


def test_the_site_hands_the_replay_and_player_pages_the_races_read() -> None:
    for path in ("/replays/1/", "/players/alice/"):
        assert resolve(path).kwargs["origins"] is race_game_origins


def test_only_the_games_of_no_day_are_asked_in_one_read(alice, daily) -> None:
    submit(client_for(alice), WIN_LOG)
    of_the_day = Game.objects.get(player=alice)
    of_no_day, _ = game_store(player=alice, deal=DEAL, log=WIN_LOG[:5], no_day=True)
    reads: list[list[int]] = []

    def cup(games: list[Game]) -> dict[int, origins.GameOrigin]:
        reads.append([game.pk for game in games])
        return {
            game.pk: origins.GameOrigin(kind="cup", label="The cup", url="/cup/") for game in games
        }

    found = origins.game_origins(games=[of_the_day, of_no_day], origins=cup)

    assert reads == [[of_no_day.pk]]
    assert set(found) == {of_no_day.pk} and found[of_no_day.pk].kind == "cup"
    assert origins.game_origins(games=[of_the_day], origins=cup) == {} and len(reads) == 1


def test_a_game_of_no_day_no_app_claims_is_practice(alice) -> None:
    game, _ = game_store(player=alice, deal=DEAL, log=WIN_LOG[:5], no_day=True)

    assert origins.game_origins(games=[game], origins=race_game_origins) == {}
    assert 'data-kind="practice"' in Client().get(f"/replays/{game.pk}/").content.decode()
