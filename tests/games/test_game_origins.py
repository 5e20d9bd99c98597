"""A game of no day names what it was played in through `games.origins`, which the apps
above games fill in (games imports none of them); a game of a day is never asked."""

from __future__ import annotations

import pytest
from django.test import Client

from games import origins
from games.models import Game
from games.services import game_store
from tests.fixtures import DEAL, WIN_LOG, client_for, submit

pytestmark = pytest.mark.django_db


@pytest.fixture
def asked(monkeypatch) -> list[int]:
    """A test app's origin, claiming every game it is asked about; the games it was asked of."""
    games: list[int] = []

    def origin(asked_of: list[Game]) -> dict[int, origins.GameOrigin]:
        games.extend(game.pk for game in asked_of)
        cup = origins.GameOrigin(kind="cup", label="The cup", url="/cup/", place=1, players=4)
        return {game.pk: cup for game in asked_of}

    monkeypatch.setattr(origins, "_ORIGINS", {"tests": origin})
    return games


def test_the_races_app_registers_its_games_origin() -> None:
    assert "races" in origins._ORIGINS


def test_a_game_of_no_day_shows_the_origin_an_app_gives_it(alice, asked) -> None:
    game, _ = game_store(player=alice, deal=DEAL, log=WIN_LOG[:5], no_day=True)

    page = Client().get(f"/replays/{game.pk}/").content.decode()

    assert asked == [game.pk]
    assert 'data-kind="cup"' in page and '<a href="/cup/">The cup</a>' in page


def test_a_game_of_no_day_no_app_claims_is_practice(alice) -> None:
    game, _ = game_store(player=alice, deal=DEAL, log=WIN_LOG[:5], no_day=True)

    assert origins.game_origin(game=game) is None
    assert 'data-kind="practice"' in Client().get(f"/replays/{game.pk}/").content.decode()


def test_a_game_of_a_day_is_never_asked(alice, daily, asked) -> None:
    submit(client_for(alice), WIN_LOG)
    game = Game.objects.get(player=alice)

    assert origins.game_origin(game=game) is None
    assert asked == []
