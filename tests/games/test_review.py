"""Plausibility signals: computed at submission, stored with the ranked game, reviewed
in the admin's queue; flags alone never change a board."""

from __future__ import annotations

import datetime
from unittest import mock

import pytest
from django.contrib.admin.sites import site
from django.test import Client, RequestFactory
from django.utils import timezone

from games import review
from games.models import Attempt, FlaggedGame, Game, ModerationAction
from games.review import review_game
from leaderboards.models import BoardEntry, PlayerStats
from leaderboards.selectors import leaderboard_page
from ranking.actions import game_review_clear
from tests import timings
from tests.fixtures import (
    VECTOR_GAMES,
    WIN_LOG,
    attempt_url,
    client_for,
    copies_checked,
    rewind,
    start,
    submit,
    submit_ranked,
)
from tests.timings import HONEST, pinned

# Days and hours matter here: `.ci/run` runs these again at the turn of a day.
pytestmark = [pytest.mark.django_db, pytest.mark.clock]

LOG = ["S"] * 200


def signals_of(**overrides):
    arguments = {
        "log": LOG,
        "won": True,
        "duration_ms": 200 * 2_000,
        "saves": [[t * 20_000, t * 10] for t in range(1, 20)],
        "times": None,
    }
    arguments.update(overrides)
    return review_game(**arguments)


# --- The signals, one by one --------------------------------------------------------


def test_an_ordinary_game_is_not_flagged():
    found = signals_of()

    assert found.flags == []
    assert found.signals["ms_per_action"] == 2_000
    assert found.signals["saves"] == 19
    assert found.signals["largest_step_actions"] == 10


@pytest.mark.parametrize(("ms_per_action", "flagged"), [(149, True), (150, False)])
def test_fewer_than_150_ms_per_action_sustained_is_too_fast(ms_per_action, flagged):
    found = signals_of(duration_ms=ms_per_action * len(LOG), saves=[])

    assert ("too_fast" in found.flags) is flagged


def test_a_whole_winning_log_in_one_submission_after_a_silence_is_a_burst():
    found = signals_of(saves=[[5_000, 3]], duration_ms=900_000)

    assert "burst" in found.flags
    assert found.signals["largest_step_actions"] == 197
    assert found.signals["silence_before_largest_step_ms"] == 895_000


def test_a_whole_winning_log_in_one_save_is_a_burst_too():
    found = signals_of(saves=[[1_000, 2], [600_000, 198]], duration_ms=610_000)

    assert "burst" in found.flags
    assert found.signals["largest_step_actions"] == 196


def test_an_unfinished_game_given_up_at_once_is_no_burst():
    assert "burst" not in signals_of(won=False, saves=[]).flags


def test_a_short_step_is_no_burst_even_for_a_short_game():
    found = signals_of(log=["S"] * 40, duration_ms=60_000, saves=[])

    assert found.flags == []


def test_even_per_action_times_are_flagged_and_uneven_ones_are_not():
    metronome = [1_000 + 400 * i + (i % 3) * 10 for i in range(len(LOG))]
    rng_like = [sum((97 * k) % 1_900 + 150 for k in range(i + 1)) for i in range(len(LOG))]

    even = signals_of(times=metronome)
    uneven = signals_of(times=rng_like)

    assert "regular_times" in even.flags
    assert even.signals["time_variation"] < review.REGULAR_MAX_VARIATION
    assert "regular_times" not in uneven.flags
    assert uneven.signals["time_variation"] > review.REGULAR_MAX_VARIATION


def test_too_few_times_say_nothing_about_regularity():
    found = signals_of(log=["S"] * 20, times=[500 * i for i in range(20)], saves=[])

    assert "regular_times" not in found.flags
    assert found.signals["times_sent"] is True


def test_flags_read_as_words_with_their_numbers():
    found = signals_of(duration_ms=100 * len(LOG), saves=[])

    reasons = review.flag_reasons(found.flags, found.signals)

    assert reasons[0].startswith("too fast: 100 ms per action")
    assert any("actions (100% of the game) arrived in one save" in r for r in reasons)


# --- At submission ------------------------------------------------------------------


def test_a_ranked_submission_and_its_copy_check_store_signals_and_flags_without_the_solver(
    alice, daily
):
    daily.par_log = " ".join(WIN_LOG)
    daily.save()
    start(client_for(alice))
    rewind(alice, 600)

    with mock.patch("games.solver.solve", side_effect=AssertionError("no solver here")):
        body = submit(client_for(alice), WIN_LOG).json()
        assert Game.objects.get(pk=body["id"]).flags == ["burst"]
        # The copy check's job, as the worker runs it every minute.
        assert copies_checked() == 1

    game = Game.objects.get(pk=body["id"])
    assert set(game.flags) == {"burst", "solver_line"}
    # The solver's line holds the game off the boards until a moderator reviews it.
    assert game.review_state == "held"
    assert game.review["actions"] == len(WIN_LOG)
    assert game.review["solver_line_similarity"] == 1.0
    assert game.copy_similarity == 1.0 and game.copy_of is None
    assert leaderboard_page(date=daily.date, order="moves")["entries"] == []
    # Cleared by a moderator, it takes its place again.
    game_review_clear(game=game, moderator=None, reason="a known player")
    assert [e["game"] for e in leaderboard_page(date=daily.date, order="moves")["entries"]] == [
        game.pk
    ]
    # Moderators' business: the public game says nothing of it.
    assert "review" not in body and "flags" not in body


def test_a_game_played_at_a_human_pace_with_saves_is_not_flagged(midday, alice, daily):
    # The saves go back an hour: at noon, all of them fall on the day played.
    start(client_for(alice))
    rewind(alice, 3_600)
    base = timezone.now()
    saves = range(20, len(WIN_LOG), 20)
    with mock.patch("django.utils.timezone.now") as now:
        # Saves every twenty actions along the hour, then the submission.
        for index, length in enumerate(saves, start=1):
            now.return_value = base - datetime.timedelta(seconds=3_600 - index * 60)
            response = client_for(alice).patch(
                attempt_url(daily.date), {"log": WIN_LOG[:length]}, format="json"
            )
            assert response.status_code == 200
        now.return_value = base
        body = submit(client_for(alice), WIN_LOG).json()

    game = Game.objects.get(pk=body["id"])
    assert game.flags == []
    assert game.review_state == ""
    assert game.review["saves"] == len(saves)
    assert game.review["largest_step_actions"] == 20


def test_practice_games_are_never_reviewed(alice, daily):
    submit(client_for(alice), WIN_LOG)

    game = Game.objects.get()
    assert (game.review, game.flags, game.review_state) == ({}, [], "")


# --- The review queue ---------------------------------------------------------------


@pytest.fixture
def flagged(alice, daily):
    """A game no person could have played (a whole win within a second): held."""
    start(client_for(alice))
    body = submit(client_for(alice), WIN_LOG).json()
    game = Game.objects.get(pk=body["id"])
    assert game.review_state == "held"
    return game


@pytest.fixture
def burst(bob, daily):
    """A win at a human pace sent in one piece: flagged, and on the boards meanwhile."""
    body = submit_ranked(client_for(bob), WIN_LOG).json()
    game = Game.objects.get(pk=body["id"])
    assert (game.flags, game.review_state) == (["burst"], "flagged")
    return game


def queue_admin():
    return site._registry[FlaggedGame]


def admin_request(user):
    request = RequestFactory().post("/admin/games/flaggedgame/")
    request.user = user
    return request


def test_the_queue_holds_the_flagged_games_waiting_for_review(flagged, admin_user):
    client = Client()
    client.force_login(admin_user)

    page = client.get("/admin/games/flaggedgame/")
    filtered = client.get("/admin/games/flaggedgame/?flag=burst")
    other = client.get("/admin/games/flaggedgame/?flag=regular_times")

    assert page.status_code == 200
    html = page.content.decode()
    assert f">{flagged.pk}<" in html
    assert "too fast:" in html and "arrived in one save or the submission" in html
    assert f">{flagged.pk}<" in filtered.content.decode()
    assert f">{flagged.pk}<" not in other.content.decode()


def test_voiding_from_the_queue_takes_the_game_off_the_boards_and_logs_it(
    flagged, daily, admin_user
):
    model_admin = queue_admin()

    with mock.patch.object(model_admin, "message_user"):
        model_admin.void_flagged(admin_request(admin_user), FlaggedGame.objects.all())

    game = Game.objects.get(pk=flagged.pk)
    assert game.is_voided and game.review_state == "voided"
    assert leaderboard_page(date=daily.date, order="score")["total"] == 0
    assert not model_admin.get_queryset(admin_request(admin_user)).exists()
    logged = ModerationAction.objects.get()
    assert (logged.kind, logged.moderator, logged.game_id) == ("void", admin_user, flagged.pk)
    assert "too_fast" in logged.reason


def test_a_held_game_is_on_no_board_until_cleared_then_takes_its_place_live(
    flagged, daily, admin_user, django_capture_on_commit_callbacks
):
    model_admin = queue_admin()
    assert leaderboard_page(date=daily.date, order="score")["total"] == 0
    assert not BoardEntry.objects.exists()
    assert PlayerStats.objects.filter(player=flagged.player, played__gt=0).count() == 0

    with (
        mock.patch.object(model_admin, "message_user"),
        mock.patch("leaderboards.changes.live.board_changed") as changed,
        django_capture_on_commit_callbacks(execute=True),
    ):
        model_admin.clear_flagged(admin_request(admin_user), FlaggedGame.objects.all())

    assert Game.objects.get(pk=flagged.pk).review_state == "cleared"
    board = leaderboard_page(date=daily.date, order="score")
    assert [(entry["player"], entry["game"]) for entry in board["entries"]] == [
        ("alice", flagged.pk)
    ]
    assert leaderboard_page(date=daily.date, order="moves")["total"] == 1
    assert PlayerStats.objects.get(player=flagged.player).played == 1
    changed.assert_called_once_with(
        date=daily.date, orders=("score", "moves"), players=(flagged.player_id,)
    )
    assert not model_admin.get_queryset(admin_request(admin_user)).exists()
    logged = ModerationAction.objects.get()
    assert (logged.kind, logged.moderator, logged.player_id) == (
        "clear",
        admin_user,
        flagged.player_id,
    )


def test_a_flagged_game_stays_on_the_boards_and_clearing_it_changes_no_board(
    burst, daily, admin_user
):
    assert leaderboard_page(date=daily.date, order="score")["total"] == 1

    game_review_clear(game=burst, moderator=admin_user)

    assert Game.objects.get(pk=burst.pk).review_state == "cleared"
    assert leaderboard_page(date=daily.date, order="score")["total"] == 1
    assert BoardEntry.objects.filter(game=burst).count() == 2


def test_the_queue_actions_are_one_click_from_the_changelist(flagged, admin_user):
    client = Client()
    client.force_login(admin_user)

    response = client.post(
        "/admin/games/flaggedgame/",
        {"action": "clear_flagged", "_selected_action": [flagged.pk]},
    )

    assert response.status_code == 302
    assert Game.objects.get(pk=flagged.pk).review_state == "cleared"


def test_a_few_quick_actions_are_not_too_fast_but_a_sustained_pace_is():
    few = review_game(
        log=LOG[: review.PACE_MIN_ACTIONS - 1],
        won=False,
        duration_ms=1,
        saves=[],
        times=None,
    )
    many = review_game(
        log=LOG[: review.PACE_MIN_ACTIONS],
        won=False,
        duration_ms=1,
        saves=[],
        times=None,
    )

    assert "too_fast" not in few.flags
    assert "too_fast" in many.flags


# --- The pace of the moves, by the server's receive times -----------------------------

# Games people played, of every length the conformance vectors hold a long one of.
HONEST_LOGS = {
    "the win of deal 4": WIN_LOG,
    **{
        f"vector game {index}": vector["log"].upper().split()
        for index, vector in enumerate(VECTOR_GAMES)
        if "refused_at" not in vector and len(vector["log"].split()) >= 200
    },
}


def streamed(log, times):
    """The review of `log` streamed with these receive times, submitted 2 s later."""
    return review_game(
        log=log,
        won=True,
        duration_ms=times[-1] + 2_000,
        saves=review.steps_of(times),
        times=times,
        times_by_server=True,
    )


@pytest.mark.parametrize("pattern", sorted(HONEST))
def test_people_playing_as_people_do_are_not_flagged_nor_refused_in_a_race(pattern):
    for index, (name, log) in enumerate(HONEST_LOGS.items()):
        for seed in range(5):
            times = HONEST[pattern](log, seed)
            found = streamed(log, times)
            assert found.flags == [], (name, seed, found.signals)
            # As a race's moves, a few games (the stalled connection's catch-up is
            # refused, and goes again a moment later).
            if pattern != "connection stalled" and index < 3 and seed < 2:
                for count, (token, at) in enumerate(zip(log, times, strict=True)):
                    refusal = review.pace_refusal(
                        log=log[:count], times=times[:count], token=token, at_ms=at
                    )
                    assert refusal is None, (name, seed, count)


def test_a_page_saving_while_its_socket_is_down_is_not_flagged():
    for seed in range(5):
        played = timings.played(WIN_LOG, seed, move_median_ms=400)
        found = signals_of(
            log=WIN_LOG, duration_ms=played[-1] + 2_000, saves=timings.page_saves(played)
        )
        assert found.flags == [], found.signals


def test_moves_streamed_at_a_machines_steady_pace_are_a_run_at_a_machines_pace():
    # Runs of 60 moves at 110 ms each, 10 s apart: slow enough on the whole, and uneven.
    log = ["12", "21"] * 150
    times = [5_000 + 110 * index + 10_000 * (index // 60) for index in range(len(log))]

    found = streamed(log, times)

    assert found.flags == ["machine_pace"]
    assert found.signals["fastest_run_ms_per_move"] == 110
    assert review.flag_reasons(found.flags, found.signals) == [
        "50 moves in a row at 110 ms per move, taps of the stock and undos aside "
        "(a person needs 120 or more)"
    ]


@pytest.mark.parametrize(("silence_ms", "flagged"), [(5_000, False), (20_000, True)])
def test_a_burst_too_small_a_share_of_a_long_game_is_flagged_after_a_silence(silence_ms, flagged):
    log = ["12", "21"] * 200
    at_pace = [1_000 * (index + 1) for index in range(360)]
    burst = [at_pace[-1] + silence_ms + index // 6 for index in range(40)]

    found = streamed(log, at_pace + burst)

    assert found.signals["burst_moves"] == 40
    assert found.signals["burst_share"] == 0.1
    assert found.signals["silence_before_largest_burst_ms"] == silence_ms
    assert ("bursts" in found.flags) is flagged


def test_a_race_refuses_a_bots_tenth_move_within_a_second_and_says_when_it_would_count():
    log, times = [], []
    for count, token in enumerate(WIN_LOG):
        at = count * 300 // len(WIN_LOG)
        wait = review.pace_refusal(log=log, times=times, token=token, at_ms=at)
        if wait is not None:
            break
        log.append(token)
        times.append(at)

    assert sum(token not in review.TAPS for token in log) == review.BURST_WINDOW_MOVES - 1
    assert wait is not None and 0 < wait <= review.BURST_WINDOW_MS
    later = review.pace_refusal(log=log, times=times, token=token, at_ms=at + wait)
    assert later is None


def test_a_streamed_attempt_saved_whole_first_times_each_action_by_the_save_that_brought_it(
    alice, daily
):
    attempt = Attempt(
        player=alice,
        daily=daily,
        started_at=timezone.now(),
        log=" ".join(WIN_LOG[:50]),
        saves=[[10_000, 20], [20_000, 40], [25_000, 50]],
    )
    attempt.saved_at = attempt.started_at + datetime.timedelta(seconds=25)

    assert attempt.action_times() == [10_000] * 20 + [20_000] * 20 + [25_000] * 10


@pytest.mark.parametrize("won", [True, False])
def test_a_game_saved_in_many_small_saves_at_once_is_flagged_as_a_streamed_one_would_be(
    alice, daily, won
):
    log = WIN_LOG if won else WIN_LOG[:-40]
    with pinned(daily.date) as clock:
        start(client_for(alice))
        clock.advance(160 * len(log))
        # Five actions a save, a save every 10 ms: no save brings much.
        for length in range(5, len(log) + 5, 5):
            clock.advance(10)
            response = client_for(alice).patch(
                attempt_url(daily.date), {"log": log[:length]}, format="json"
            )
            assert response.status_code == 200
        clock.advance(1_000)
        body = submit(client_for(alice), log).json()

    game = Game.objects.get(pk=body["id"])
    assert game.review["largest_step_actions"] == 5
    assert {"bursts", "machine_pace"} <= set(game.flags)
