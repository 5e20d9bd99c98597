"""Races through their services: create, join, start, store actions, end; and what they
store for the players' pages (a game of no day each, with its replay)."""

from __future__ import annotations

import datetime
from collections.abc import Callable

import pytest
from django.contrib.auth.base_user import AbstractBaseUser
from django.test import TestCase
from django.utils import timezone

from easyharp_site.errors import ServiceError
from games.models import DailyDeal, Game, GameFingerprint
from games.selectors import game_get_unlocked
from leaderboards.models import BoardEntry, PlayerStats
from races import selectors, services
from races.models import AWAY_AFTER, COUNTDOWN, RACERS_MAX, Race, Racer
from races.selectors import race_deal_hold
from races.tasks import races_end
from ranking.actions import player_ban
from tests.fixtures import WIN_LOG, client_for
from tests.races.racing import RACE_DEAL, race_for, race_save, racer, rewind, running, store

pytestmark = pytest.mark.django_db

Players = Callable[[str], AbstractBaseUser]


def state(race: Race) -> dict:
    race.refresh_from_db()
    return selectors.race_state(race=race, now=timezone.now())


# --- Creating -------------------------------------------------------------------------


def test_a_race_is_created_on_a_fresh_deal_with_its_host_in_its_lobby(
    alice: AbstractBaseUser,
) -> None:
    race = services.race_create(host=alice, minutes=15)

    assert race.status(timezone.now()) == "lobby"
    assert race.time_limit == datetime.timedelta(minutes=15)
    assert len(race.code) >= 20
    assert [r.player for r in Racer.objects.filter(race=race)] == [alice]
    # The deal is not told before the start.
    assert state(race)["deal"] is None


def test_a_race_never_plays_a_days_deal(alice: AbstractBaseUser, monkeypatch) -> None:
    DailyDeal.objects.create(date=timezone.now().date(), number=7)
    DailyDeal.objects.create(date=timezone.now().date() - datetime.timedelta(days=3), number=8)
    drawn = iter([6, 7, 8])  # secrets.randbelow(DEAL_MAX) + 1: 7, 8 and 9 in turn
    monkeypatch.setattr(services.secrets, "randbelow", lambda _: next(drawn))

    race = services.race_create(host=alice, minutes=5)

    assert race.deal_number == 9


def test_a_time_limit_off_the_list_is_refused(alice: AbstractBaseUser) -> None:
    with pytest.raises(ServiceError) as refused:
        services.race_create(host=alice, minutes=7)
    assert refused.value.code == "invalid_time_limit"


# --- Joining ----------------------------------------------------------------------------


def test_eight_players_join_and_the_ninth_is_refused(make_player: Players) -> None:
    host, *others = [make_player(f"p{i}") for i in range(RACERS_MAX + 1)]
    race = race_for(host, *others[: RACERS_MAX - 1])

    with pytest.raises(ServiceError) as refused:
        services.race_join(player=others[-1], code=race.code)

    assert refused.value.code == "race_full" and refused.value.status_code == 409
    assert refused.value.extra == {"limit": 8}
    assert Racer.objects.filter(race=race).count() == RACERS_MAX


def test_joining_again_is_harmless(alice: AbstractBaseUser, bob: AbstractBaseUser) -> None:
    race = race_for(alice, bob)

    services.race_join(player=bob, code=race.code)

    assert Racer.objects.filter(race=race).count() == 2


def test_nobody_joins_once_the_race_has_started(make_player: Players) -> None:
    alice, bob, carol = make_player("alice"), make_player("bob"), make_player("carol")
    race = race_for(alice, bob)
    services.race_start(player=alice, code=race.code)

    with pytest.raises(ServiceError) as refused:
        services.race_join(player=carol, code=race.code)

    assert refused.value.code == "race_started"


def test_an_unknown_code_is_not_found(alice: AbstractBaseUser) -> None:
    with pytest.raises(ServiceError) as refused:
        services.race_join(player=alice, code="no-such-race")
    assert refused.value.code == "not_found" and refused.value.status_code == 404


# --- Starting -----------------------------------------------------------------------


def test_the_host_starts_it_and_play_begins_after_the_countdown_for_everyone(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = race_for(alice, bob)
    before = timezone.now()

    services.race_start(player=alice, code=race.code)

    race.refresh_from_db()
    assert race.starts_at is not None and race.ends_at is not None
    assert before + COUNTDOWN <= race.starts_at <= timezone.now() + COUNTDOWN
    assert race.ends_at - race.starts_at == datetime.timedelta(minutes=10)
    assert state(race)["status"] == "countdown"
    assert state(race)["deal"] == "EH1-N-AAAAAAE"
    # An action during the countdown is refused, and nothing is stored.
    assert store(race, bob, ["S"]) == "not_started"
    assert racer(race, bob).log == ""
    rewind(race, COUNTDOWN.total_seconds())
    assert state(race)["status"] == "running"
    assert store(race, bob, ["S"]) == "saved"


def test_only_the_host_starts_it(alice: AbstractBaseUser, bob: AbstractBaseUser) -> None:
    race = race_for(alice, bob)

    with pytest.raises(ServiceError) as refused:
        services.race_start(player=bob, code=race.code)

    assert refused.value.code == "not_host" and refused.value.status_code == 403
    assert state(race)["status"] == "lobby"


# --- Playing --------------------------------------------------------------------------


def test_each_players_progress_is_stored_and_shown_without_their_log(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = running(race_for(alice, bob))

    assert store(race, alice, WIN_LOG[:40], at_ms=1500) == "saved"

    stored = racer(race, alice)
    assert stored.log.split() == WIN_LOG[:40] and stored.version == 1
    assert stored.last_action_ms == 1500
    shown = {player["player"]: player for player in state(race)["players"]}
    assert shown["alice"]["foundations"] == stored.on_foundations > 0
    assert (shown["alice"]["score"], shown["alice"]["moves"]) == (stored.score, stored.moves)
    assert shown["bob"] == {**shown["bob"], "score": 0, "moves": 0, "foundations": 0}
    assert "log" not in shown["alice"] and "S" not in str(state(race)["players"])


def test_a_write_over_a_game_it_has_not_seen_is_stale(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = running(race_for(alice, bob))
    store(race, alice, ["S"])

    [result] = services.races_actions_save(
        saves=[
            services.RaceSave(
                race_id=race.pk,
                player_id=alice.pk,
                version=0,
                log=["S", "S"],
                times=[0, 0],
                score=0,
                moves=2,
                on_foundations=0,
                won=False,
            )
        ]  # fmt: skip
    )

    assert (result.outcome, result.log, result.version) == ("stale", ["S"], 1)
    assert racer(race, alice).log == "S"


def test_one_group_stores_the_writes_of_many_races(make_player: Players) -> None:
    """The writes of a process's race sockets are grouped in one transaction: each
    save has its own outcome, in order."""
    alice, bob, carol, dave = (make_player(name) for name in ("alice", "bob", "carol", "dave"))
    first, second = running(race_for(alice, bob)), running(race_for(carol, dave))

    with TestCase.captureOnCommitCallbacks() as callbacks:
        results = services.races_actions_save(
            saves=[
                race_save(first, alice, WIN_LOG[:10], 0),
                race_save(second, carol, WIN_LOG[:5], 0),
                race_save(first, bob, WIN_LOG[:3], 0),
                race_save(first, alice, WIN_LOG[:12], 1),  # the same socket's next write
                race_save(first, alice, WIN_LOG[:11], 1),  # another socket's, built on version 1
                race_save(second, dave, ["S"], 3),  # a version never stored
            ]
        )

    outcomes = [(result.outcome, result.version) for result in results]
    assert outcomes == [
        ("saved", 1), ("saved", 1), ("saved", 1), ("saved", 2), ("stale", 2), ("stale", 0)
    ]  # fmt: skip
    assert results[4].log == WIN_LOG[:12] and results[4].times == [1000] * 12
    assert results[5].log == [] and results[5].times == []
    assert racer(first, alice).log.split() == WIN_LOG[:12]
    assert racer(first, bob).log.split() == WIN_LOG[:3]
    assert racer(second, carol).log.split() == WIN_LOG[:5]
    # Stored actions are announced by the sockets (`RaceAnnouncer`), not by the write.
    assert callbacks == []


def test_a_win_in_a_group_ends_its_race_before_the_groups_next_writes(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = running(race_for(alice, bob))

    results = services.races_actions_save(
        saves=[
            race_save(race, bob, WIN_LOG[:50], 0),
            race_save(race, alice, WIN_LOG, 0),
            race_save(race, bob, WIN_LOG[:60], 1),
        ]
    )

    assert [result.outcome for result in results] == ["saved", "saved", "race_over"]
    race.refresh_from_db()
    assert (race.end, race.winner) == (Race.End.WON, alice)
    # The end stored each player's game as written in the group.
    assert racer(race, bob).log.split() == WIN_LOG[:50]
    assert racer(race, bob).game is not None and racer(race, alice).game.won


def test_the_first_win_ends_the_race_and_a_later_action_is_refused(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = running(race_for(alice, bob))
    store(race, bob, WIN_LOG[:100], at_ms=1000)

    assert store(race, alice, WIN_LOG, at_ms=2000) == "saved"

    race.refresh_from_db()
    assert (race.end, race.winner) == (Race.End.WON, alice)
    assert race.ended_at is not None and race.status(timezone.now()) == "over"
    assert store(race, bob, WIN_LOG[100:110]) == "race_over"
    assert racer(race, bob).log.split() == WIN_LOG[:100]
    places = [(p["player"], p["place"], p["won"]) for p in state(race)["players"]]
    assert places == [("alice", 1, True), ("bob", 2, False)]
    assert (racer(race, alice).rank, racer(race, bob).rank) == (1, 2)


def test_at_the_time_limit_the_best_score_wins_and_no_action_counts_after_it(
    make_player: Players,
) -> None:
    alice, bob, carol = make_player("alice"), make_player("bob"), make_player("carol")
    race = running(race_for(alice, bob, carol, minutes=5))
    store(race, alice, WIN_LOG[:30], at_ms=1000)
    store(race, bob, WIN_LOG[:60], at_ms=2000)
    rewind(race, 5 * 60)

    # Over whoever looks, before its end is stored: the order is final already.
    assert state(race)["status"] == "over" and state(race)["winner"] == "bob"
    assert store(race, bob, WIN_LOG[60:70]) == "race_over"

    race.refresh_from_db()
    assert (race.end, race.winner, race.ended_at) == (Race.End.TIME, bob, race.ends_at)
    assert [p["player"] for p in state(race)["players"]] == ["bob", "alice", "carol"]
    assert racer(race, carol).rank == 3 and racer(race, carol).game is None


def test_ties_go_to_fewer_moves_then_the_earlier_last_action(make_player: Players) -> None:
    alice, bob, carol, dan = (make_player(name) for name in ("alice", "bob", "carol", "dan"))
    race = running(race_for(alice, bob, carol, dan))
    # A full stock cycle and back to the start: score 0 with 60 moves, or with 2.
    store(race, alice, ["S"] * 60, at_ms=900)
    store(race, bob, ["S", "S"], at_ms=800)
    store(race, carol, ["S", "S"], at_ms=700)

    order = [p["player"] for p in selectors.race_state(race=race, now=timezone.now())["players"]]

    assert order == ["carol", "bob", "alice", "dan"]


def test_a_race_where_nobody_played_gives_no_places(make_player: Players) -> None:
    alice, bob, carol = make_player("alice"), make_player("bob"), make_player("carol")
    race = running(race_for(alice, bob, carol, minutes=5))
    rewind(race, 5 * 60)

    # Over before its end is stored, and once stored: nobody placed, nobody won.
    assert [p["place"] for p in state(race)["players"]] == [None, None, None]
    assert races_end() == "1 race(s) ended"

    race.refresh_from_db()
    assert (race.end, race.winner) == (Race.End.TIME, None)
    assert [racer(race, p).rank for p in (alice, bob, carol)] == [None, None, None]
    assert [p["place"] for p in state(race)["players"]] == [None, None, None]
    assert selectors.player_races(player=alice)[0]["place"] is None


def test_one_action_is_enough_to_place_everyone(make_player: Players) -> None:
    alice, bob = make_player("alice"), make_player("bob")
    race = running(race_for(alice, bob, minutes=5))
    store(race, bob, ["S"], at_ms=100)
    rewind(race, 5 * 60)

    races_end()

    assert (racer(race, bob).rank, racer(race, alice).rank) == (1, 2)


def test_the_end_races_job_ends_a_race_no_socket_watches(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = running(race_for(alice, bob, minutes=5))
    store(race, alice, ["S"], at_ms=100)
    rewind(race, 5 * 60 + 1)

    assert races_end() == "1 race(s) ended"
    assert races_end() == "0 race(s) ended"

    race.refresh_from_db()
    assert (race.end, race.winner) == (Race.End.TIME, alice)


def test_a_lobby_nobody_starts_is_closed_after_a_day(alice: AbstractBaseUser) -> None:
    race = race_for(alice)
    Race.objects.filter(pk=race.pk).update(created_at=timezone.now() - datetime.timedelta(days=2))

    races_end()

    race.refresh_from_db()
    assert race.end == Race.End.CANCELLED and state(race)["status"] == "over"


# --- Leaving and away -------------------------------------------------------------------


def test_leaving_the_lobby_frees_the_seat_and_the_host_passes_on(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = race_for(alice, bob)

    services.race_leave(player=alice, code=race.code)

    race.refresh_from_db()
    assert race.host == bob
    assert [p["player"] for p in state(race)["players"]] == ["bob"]
    services.race_leave(player=bob, code=race.code)
    assert Race.objects.get(pk=race.pk).end == Race.End.CANCELLED


def test_leaving_a_running_race_stops_the_game_where_it_is(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = running(race_for(alice, bob))
    store(race, bob, WIN_LOG[:20], at_ms=100)

    services.race_leave(player=bob, code=race.code)

    assert store(race, bob, WIN_LOG[20:25]) == "left_race"
    shown = {p["player"]: p for p in state(race)["players"]}
    assert shown["bob"]["left"] and shown["bob"]["score"] == racer(race, bob).score
    assert state(race)["status"] == "running"
    # The last one to leave ends it; the one who left with a better game wins.
    services.race_leave(player=alice, code=race.code)
    race.refresh_from_db()
    assert (race.end, race.winner) == (Race.End.LEFT, bob)


# --- A ban -----------------------------------------------------------------------------


@pytest.fixture
def ban(django_capture_on_commit_callbacks) -> Callable[[AbstractBaseUser], None]:
    """Ban a player as a moderator does, with what follows the ban's commit run too."""

    def banning(player: AbstractBaseUser) -> None:
        with django_capture_on_commit_callbacks(execute=True):
            player_ban(player=player, moderator=None, reason="cheating")

    return banning


def test_a_banned_player_is_gone_from_the_lobby_and_the_host_passes_on(
    alice: AbstractBaseUser, bob: AbstractBaseUser, make_player: Players, ban
) -> None:
    carol = make_player("carol")
    race = race_for(alice, bob, carol)
    alone = race_for(bob)

    ban(alice)
    ban(bob)

    race.refresh_from_db()
    assert race.host == carol
    assert [p["player"] for p in state(race)["players"]] == ["carol"]
    assert Race.objects.get(pk=alone.pk).end == Race.End.CANCELLED


def test_a_banned_player_in_a_running_race_stops_ranks_last_and_cannot_win(
    alice: AbstractBaseUser, bob: AbstractBaseUser, ban
) -> None:
    race = running(race_for(alice, bob))
    store(race, alice, WIN_LOG[:10], at_ms=100)
    store(race, bob, WIN_LOG[:40], at_ms=200)

    ban(bob)

    assert store(race, bob, WIN_LOG[40:45]) == "left_race"
    shown = {p["player"]: p for p in state(race)["players"]}
    # Said as removed, not as having left of their own accord.
    assert (shown["bob"]["removed"], shown["alice"]["removed"]) == (True, False)
    assert shown["bob"]["left"] and [p["player"] for p in state(race)["players"]] == [
        "alice",
        "bob",
    ]
    rewind(race, race.time_limit.total_seconds())
    assert services.race_end_if_due(race_id=race.pk)
    race.refresh_from_db()
    assert (race.end, race.winner) == (Race.End.TIME, alice)
    assert (racer(race, alice).rank, racer(race, bob).rank) == (1, 2)
    assert racer(race, bob).game is None  # a banned player's game is stored nowhere


def test_a_banned_last_player_ends_the_race_with_no_winner(
    alice: AbstractBaseUser, bob: AbstractBaseUser, ban
) -> None:
    race = running(race_for(alice, bob))
    store(race, bob, WIN_LOG[:40], at_ms=200)
    services.race_leave(player=alice, code=race.code)

    ban(bob)

    race.refresh_from_db()
    assert (race.end, race.winner) == (Race.End.LEFT, None)


def test_a_ban_leaves_a_race_that_is_over_as_it_ended(
    alice: AbstractBaseUser, bob: AbstractBaseUser, ban
) -> None:
    race = running(race_for(alice, bob))
    store(race, bob, WIN_LOG, at_ms=900)

    ban(bob)

    race.refresh_from_db()
    assert (race.end, race.winner, racer(race, bob).banned) == (Race.End.WON, bob, False)


def test_a_player_silent_past_the_limit_shows_as_away_and_the_race_goes_on(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = running(race_for(alice, bob))
    store(race, alice, ["S"])
    Racer.objects.filter(race=race, player=bob).update(
        seen_at=timezone.now() - AWAY_AFTER - datetime.timedelta(seconds=1)
    )

    shown = {p["player"]: p for p in state(race)["players"]}
    assert (shown["alice"]["away"], shown["bob"]["away"]) == (False, True)
    assert state(race)["status"] == "running"
    services.racer_seen(race_id=race.pk, player_id=bob.pk)
    assert not {p["player"]: p for p in state(race)["players"]}["bob"]["away"]


# --- What is stored --------------------------------------------------------------------


def test_each_players_game_is_stored_as_a_game_of_no_day_with_its_replay(
    alice: AbstractBaseUser, bob: AbstractBaseUser, daily: DailyDeal
) -> None:
    # Even on today's deal (which a race never draws), a race's games are of no day.
    race = running(race_for(alice, bob))
    assert daily.number == RACE_DEAL
    store(race, bob, WIN_LOG[:50], at_ms=700)
    store(race, alice, WIN_LOG, at_ms=1200)

    alice_game = racer(race, alice).game
    bob_game = racer(race, bob).game
    assert alice_game is not None and bob_game is not None
    assert (alice_game.won, alice_game.daily, alice_game.ranked) == (True, None, False)
    assert bob_game.log.split() == WIN_LOG[:50] and bob_game.times == [700] * 50
    # Nothing of the daily contest: no board, no record, no copy check.
    assert not BoardEntry.objects.exists() and not PlayerStats.objects.exists()
    assert not Game.objects.filter(fingerprint_pending=True).exists()
    assert not GameFingerprint.objects.exists()
    assert not Game.objects.filter(daily__isnull=False).exists()


def test_the_games_are_listed_on_the_players_races_and_replay_by_link(
    alice: AbstractBaseUser, bob: AbstractBaseUser, make_player: Players
) -> None:
    race = running(race_for(alice, bob))
    store(race, bob, WIN_LOG[:50], at_ms=700)
    store(race, alice, WIN_LOG, at_ms=1200)
    bob_game = racer(race, bob).game
    assert bob_game is not None

    listed = selectors.player_races(player=bob, ended=True)

    assert [(r["place"], r["game"], r["winner"]) for r in listed] == [(2, bob_game.pk, "alice")]
    outsider = make_player("carol")
    assert game_get_unlocked(game_id=bob_game.pk, viewer=outsider)[0] == bob_game


def test_no_hint_is_given_on_a_deal_while_a_race_plays_it(
    alice: AbstractBaseUser, bob: AbstractBaseUser
) -> None:
    race = race_for(alice, bob)
    hint = {"deal": "EH1-N-AAAAAAE", "log": ""}
    # In the lobby nobody knows the deal yet; once started, nobody gets its hints.
    services.race_start(player=alice, code=race.code)

    refused = client_for(bob).post("/api/hint/", hint, format="json")

    assert refused.status_code == 403 and refused.json()["error"]["code"] == "race_running"
    # Another deal is held by nothing; this one no longer once the race is over.
    assert race_deal_hold(5) is None
    rewind(race, 10 * 60 + COUNTDOWN.total_seconds())
    assert race_deal_hold(RACE_DEAL) is None
