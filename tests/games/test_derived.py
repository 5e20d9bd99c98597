"""The stores derived from games are reached through one dispatcher (`games.derived`),
in a fixed order, from the services that change games, inside their transaction."""

from __future__ import annotations

import pytest

from games import derived
from games.models import Game
from games.services import (
    game_review_clear,
    game_submit,
    game_void,
    player_ban,
    player_unban,
)
from leaderboards.models import BoardEntry, PlayerStats
from tests.fixtures import DEAL, WIN_LOG, play_ranked


@pytest.fixture
def heard(monkeypatch):
    """Every call the dispatcher passes on, after the apps' own stores, as (event, ...)."""
    calls: list[tuple] = []
    stores = derived.DerivedStores(
        app="tests",
        game_stored=lambda game: calls.append(("stored", game.pk)),
        game_voided=lambda game: calls.append(("voided", game.pk)),
        player_games_changed=lambda player, dates: calls.append(("changed", player.pk, [*dates])),
        player_banned=lambda player: calls.append(("banned", player.pk)),
    )
    monkeypatch.setattr(derived, "_REGISTERED", [*derived.registered(), stores])
    return calls


def test_the_boards_are_written_before_the_leagues() -> None:
    assert [stores.app for stores in derived.registered()] == ["leaderboards", "leagues", "races"]


def test_registering_an_app_again_replaces_its_stores(monkeypatch) -> None:
    monkeypatch.setattr(derived, "_REGISTERED", list(derived.registered()))
    again = derived.DerivedStores(app="leaderboards")
    derived.derived_stores_register(again)
    assert [stores.app for stores in derived.registered()] == ["leaderboards", "leagues", "races"]
    assert derived.registered()[0] is again


def test_a_submission_reaches_every_store_once_and_a_retry_none(alice, daily, heard) -> None:
    game = play_ranked(alice, WIN_LOG)
    assert heard == [("stored", game.pk)]
    # The boards' own stores took it before the last store heard of it.
    assert BoardEntry.objects.filter(game=game).count() == 2
    assert PlayerStats.objects.get(player=alice).played == 1

    game_submit(player=alice, deal=DEAL, log=WIN_LOG, idempotency_key="k")
    game_submit(player=alice, deal=DEAL, log=WIN_LOG, idempotency_key="k")
    assert len(heard) == 2


def test_moderation_reaches_every_store(alice, daily, heard) -> None:
    game = play_ranked(alice, WIN_LOG)
    game_void(game=game, reason="test")
    assert not BoardEntry.objects.filter(game=game).exists()
    player_ban(player=alice, moderator=None, reason="test")
    player_unban(player=alice, moderator=None, reason="test")
    assert heard == [
        ("stored", game.pk),
        ("voided", game.pk),
        ("changed", alice.pk, [daily.date]),
        ("banned", alice.pk),
        ("changed", alice.pk, [daily.date]),
    ]


def test_a_cleared_held_game_reaches_every_store(alice, daily, heard) -> None:
    game = play_ranked(alice, WIN_LOG)
    Game.objects.filter(pk=game.pk).update(review_state="held")
    game_review_clear(game=game, moderator=None)
    assert heard[-1] == ("changed", alice.pk, [daily.date])


def test_a_store_that_fails_undoes_the_whole_submission(alice, daily, monkeypatch) -> None:
    def broken(game: Game) -> None:
        raise RuntimeError("store down")

    failing = derived.DerivedStores(app="tests", game_stored=broken)
    monkeypatch.setattr(derived, "_REGISTERED", [*derived.registered(), failing])
    with pytest.raises(RuntimeError, match="store down"):
        play_ranked(alice, WIN_LOG)
    assert not Game.objects.exists()
    assert not BoardEntry.objects.exists()
