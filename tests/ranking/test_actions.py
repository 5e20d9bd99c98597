"""Every action that changes what ranks calls each store it changes, once, in order
(`ranking.actions`), inside one transaction that a failing store rolls back whole."""

from __future__ import annotations

import pytest

from games.models import Game
from leaderboards.models import BoardEntry, PlayerStats
from leagues.models import Membership, SettledDay
from leagues.services import league_create
from ranking import actions
from tests.fixtures import DEAL, PASSWORD, WIN_LOG, play_ranked

pytestmark = pytest.mark.django_db


@pytest.fixture
def heard(monkeypatch):
    """Every call an action makes to the stores above games, as (store, ...), in order;
    each store still does its work."""
    calls: list[tuple] = []

    def spy(module, name, record):
        real = getattr(module, name)

        def called(**kwargs):
            calls.append(record(**kwargs))
            return real(**kwargs)

        monkeypatch.setattr(module, name, called)

    spy(actions.boards, "game_ranked", lambda game: ("boards: ranked", game.pk))
    spy(actions.boards, "game_unranked", lambda game: ("boards: unranked", game.pk))
    spy(actions.boards, "player_reranked", lambda player, dates: ("boards: reranked", [*dates]))
    spy(actions.boards, "player_unranked", lambda player: ("boards: unranked player", player.pk))
    spy(actions.leagues, "day_unsettled_by_void", lambda game: ("leagues: unsettled", game.pk))
    spy(actions.leagues, "days_unsettled", lambda dates: ("leagues: unsettled", [*dates]))
    spy(actions.leagues, "player_forgotten", lambda player: ("leagues: forgotten", player.pk))
    spy(actions.races, "player_banned_from_races", lambda player: ("races: out", player.pk))
    return calls


def test_a_submission_ranks_once_and_a_retry_changes_nothing(alice, daily, heard) -> None:
    game = play_ranked(alice, WIN_LOG)
    assert heard == [("boards: ranked", game.pk)]
    assert BoardEntry.objects.filter(game=game).count() == 2
    assert PlayerStats.objects.get(player=alice).played == 1

    actions.game_submit(player=alice, deal=DEAL, log=WIN_LOG, idempotency_key="k")
    actions.game_submit(player=alice, deal=DEAL, log=WIN_LOG, idempotency_key="k")
    assert len(heard) == 2  # the practice game once, its retry not


def test_moderation_reaches_the_boards_then_the_leagues_then_the_races(alice, daily, heard) -> None:
    game = play_ranked(alice, WIN_LOG)
    actions.game_void(game=game, reason="test")
    actions.game_void(game=game, reason="again")  # voided already: nothing
    assert not BoardEntry.objects.filter(game=game).exists()
    actions.player_ban(player=alice, moderator=None, reason="test")
    actions.player_ban(player=alice, moderator=None, reason="again")  # banned already
    actions.player_unban(player=alice, moderator=None, reason="test")
    assert heard == [
        ("boards: ranked", game.pk),
        ("boards: unranked", game.pk),
        ("leagues: unsettled", game.pk),
        ("boards: reranked", [daily.date]),
        ("leagues: unsettled", [daily.date]),
        ("races: out", alice.pk),
        ("boards: reranked", [daily.date]),
        ("leagues: unsettled", [daily.date]),
    ]


def test_a_cleared_held_game_goes_back_on_the_boards(alice, daily, heard) -> None:
    game = play_ranked(alice, WIN_LOG)
    Game.objects.filter(pk=game.pk).update(review_state="held")
    actions.game_review_clear(game=game, moderator=None)
    assert heard[-2:] == [("boards: reranked", [daily.date]), ("leagues: unsettled", [daily.date])]
    assert BoardEntry.objects.filter(game=game).exists()


def test_a_deletion_takes_the_player_off_every_board_and_league(alice, daily, heard) -> None:
    game = play_ranked(alice, WIN_LOG)
    league_create(owner=alice, name="Lunch")
    SettledDay.objects.create(date=daily.date, players=1, settled_at=game.created_at)

    actions.player_delete(player=alice, password=PASSWORD)
    actions.player_erase(player=alice)  # erased already: nothing

    assert heard[1:] == [
        ("boards: unranked player", alice.pk),
        ("boards: reranked", [daily.date]),  # each day they are on, rebuilt without them
        ("leagues: forgotten", alice.pk),
    ]
    assert not BoardEntry.objects.filter(player=alice).exists()
    assert not Membership.objects.filter(player=alice).exists()
    assert Game.objects.filter(pk=game.pk).exists()  # the replay stays


def test_a_store_that_fails_undoes_the_whole_submission(alice, daily, monkeypatch) -> None:
    def broken(*, game: Game) -> None:
        raise RuntimeError("store down")

    monkeypatch.setattr(actions.boards, "game_ranked", broken)
    with pytest.raises(RuntimeError, match="store down"):
        play_ranked(alice, WIN_LOG)
    assert not Game.objects.exists()
    assert not BoardEntry.objects.exists()
