"""Copies recognised: a ranked game that plays another player's game of the deal (or the
solver's line) is flagged `copied`, however its moves were swapped or padded; honest
games and the player's own games are not; the lookup reads a bounded number of rows.
The check is a job that runs after the submission, in the order the games were stored."""

from __future__ import annotations

import datetime
import functools
import heapq
import random

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from games import copies
from games.models import Attempt, Game, GameFingerprint, ReviewState
from games.rules import Game as Table
from games.rules import replay, table_hashes
from games.services import attempt_start
from games.solver import FIRST_WIN, solve
from leaderboards.models import BoardEntry
from ranking.actions import (
    copies_check,
    game_review_clear,
    game_submit,
    game_void,
    unsubmitted_attempts_check,
)
from tests.fixtures import DEAL, DEAL_NUMBER, WIN_LOG, copies_checked, play_ranked

pytestmark = pytest.mark.django_db


def play_checked(player, log) -> Game:
    """`play_ranked`, then the copy check's job: the ranked game as the job left it."""
    game = play_ranked(player, log)
    copies_checked()
    game.refresh_from_db()
    return game


def swap(log: list[str], *at: int) -> list[str]:
    """The log with the actions at each index and the next one swapped."""
    log = list(log)
    for index in at:
        log[index], log[index + 1] = log[index + 1], log[index]
    return log


def independent_pairs(log: list[str]) -> list[int]:
    """Indexes of adjacent moves that may be played in either order to the same table
    (no two overlapping)."""
    game, found = Table(DEAL), [-2]
    for index, (first, second) in enumerate(zip(log, log[1:], strict=False)):
        if first != second and not {first, second} & {"S", "U"} and game.is_legal(second):
            swapped = game.copy()
            swapped.play(second)
            if swapped.is_legal(first):
                swapped.play(first)
                straight = game.copy()
                straight.play_log([first, second])
                if swapped.position() == straight.position() and index > found[-1] + 1:
                    found.append(index)
        game.play(first)
    return found[1:]


@functools.cache
def solver_win() -> list[str]:
    return list(solve(DEAL_NUMBER, work=FIRST_WIN).log)


def padded(log: list[str]) -> list[str]:
    """The log with moves inserted: a move taken back, a whole stock cycle, and a card
    moved to a column and back."""
    table = replay(DEAL, log[:100]).table()
    cycle = ["S"] * (table["stock"] + table["waste"] + 1)
    detour_at = next(i for i in range(150, len(log)) if _detour(log[:i]))
    return [
        log[0],
        "U",
        *log[:100],
        *cycle,
        *log[100:detour_at],
        *_detour(log[:detour_at]),
        *log[detour_at:],
    ]


def _detour(log: list[str]) -> list[str]:
    game = replay(DEAL, log)
    for token in game.legal_actions():
        if len(token) == 2 and token.isdigit():
            away = game.copy()
            away.play(token)
            if away.is_legal(token[::-1]):
                away.play(token[::-1])
                if away.position() == game.position():
                    return [token, token[::-1]]
    return []


def test_a_copy_with_two_independent_moves_swapped_is_flagged_with_its_original(alice, bob, daily):
    original = play_checked(bob, WIN_LOG)
    copy_log = swap(WIN_LOG, *independent_pairs(WIN_LOG)[:2])
    assert copy_log != WIN_LOG and replay(DEAL, copy_log).is_won

    copy = play_checked(alice, copy_log)

    assert "copied" in copy.flags and copy.review_state == "held"
    assert copy.copy_of == original
    assert copy.copy_similarity == pytest.approx(1.0, abs=0.02)
    assert copy.review["closest_game"] == original.pk
    assert "copied" not in original.flags and original.copy_of is None


def test_a_copy_with_moves_swapped_and_inserted_is_flagged(alice, bob, daily):
    original = play_checked(bob, WIN_LOG)
    copy_log = padded(swap(WIN_LOG, *independent_pairs(WIN_LOG)[:2]))
    assert len(copy_log) > len(WIN_LOG) + 40 and replay(DEAL, copy_log).is_won

    copy = play_checked(alice, copy_log)

    assert "copied" in copy.flags
    assert copy.copy_of == original
    assert copy.copy_similarity > 0.95


def test_a_copy_of_a_practice_game_of_the_day_is_flagged_too(alice, bob, daily):
    practice, _ = game_submit(player=bob, deal=DEAL, log=WIN_LOG, practice=True)

    copy = play_checked(alice, swap(WIN_LOG, independent_pairs(WIN_LOG)[0]))

    assert not practice.ranked and copy.copy_of == practice and "copied" in copy.flags


def test_the_first_80_percent_of_a_game_finished_otherwise_is_a_copy(alice, bob, daily):
    original = play_checked(bob, WIN_LOG)
    # 80 % of its play: of the actions that change the table (not taps, not undos).
    moves = [i for i, token in enumerate(WIN_LOG) if token not in ("S", "U")]
    prefix = WIN_LOG[: moves[int(len(moves) * 0.8)]]
    finish = solve(DEAL_NUMBER, prefix, work=FIRST_WIN).log
    assert finish

    copy = play_checked(alice, [*prefix, *finish])

    assert copy.copy_of == original and copy.copy_similarity > 0.7


def test_the_solver_line_with_two_moves_swapped_is_flagged(alice, daily):
    line = solver_win()
    daily.par_log = " ".join(line)
    daily.save()
    swapped = swap(line, *independent_pairs(line)[:2])
    # The common prefix the old check compared stops at the first swap.
    assert swapped[: independent_pairs(line)[0]] == line[: independent_pairs(line)[0]]

    game = play_checked(alice, swapped)

    assert "solver_line" in game.flags and "copied" not in game.flags
    assert game.copy_of is None and game.copy_similarity == pytest.approx(1.0, abs=0.02)
    assert game.review["solver_line_similarity"] == pytest.approx(1.0, abs=0.02)


def test_the_players_own_earlier_practice_game_is_not_a_copy(alice, daily):
    game_submit(player=alice, deal=DEAL, log=WIN_LOG, practice=True)

    ranked = play_checked(alice, swap(WIN_LOG, independent_pairs(WIN_LOG)[0]))

    assert "copied" not in ranked.flags and ranked.copy_of is None
    assert ranked.review["closest_game"] is None


def test_honest_independent_wins_of_the_deal_are_not_flagged(alice, bob, daily):
    play_checked(bob, WIN_LOG)

    honest = play_checked(alice, solver_win())

    assert "copied" not in honest.flags
    assert honest.copy_of is None and honest.copy_similarity is None
    similarity = honest.review["closest_game_similarity"]
    assert similarity is None or similarity < copies.COPY_SIMILARITY / 2


def test_every_daily_game_leaves_its_sketch_and_other_deals_none(alice, bob, daily):
    ranked = play_checked(bob, WIN_LOG)
    practice, _ = game_submit(player=alice, deal=DEAL, log=WIN_LOG[:300], practice=True)
    other, _ = game_submit(player=alice, deal="EH1-N-AAAAAAB", log="S W9")
    copies_checked()

    sketch = copies.sketch(copies.game_tables(deal_number=DEAL_NUMBER, log=WIN_LOG, won=True))
    stored = GameFingerprint.objects.filter(game=ranked).values_list("hash", flat=True)
    assert sorted(stored) == sorted(sketch) and len(sketch) == copies.SKETCH_SIZE
    assert GameFingerprint.objects.filter(game=practice).count() == copies.SKETCH_SIZE
    assert not GameFingerprint.objects.filter(game=other).exists()


def crowd_the_sketch(*, player, daily, games: int) -> list[int]:
    """`games` stored games of other players that share every hash of WIN_LOG's sketch."""
    sketch = copies.sketch(copies.game_tables(deal_number=DEAL_NUMBER, log=WIN_LOG, won=True))
    crowd = Game.objects.bulk_create(
        Game(
            player=player,
            deal_number=DEAL_NUMBER,
            log="S",
            score=0,
            moves=1,
            won=False,
            actions=1,
            rules_version="EH1",
            daily=daily,
            created_at=daily.closes_at,
        )
        for _ in range(games)
    )
    GameFingerprint.objects.bulk_create(
        GameFingerprint(deal_number=DEAL_NUMBER, hash=table, game=game, player=player)
        for game in crowd
        for table in sketch
    )
    return sketch


def test_the_lookup_reads_a_bounded_number_of_rows_however_many_games_share_a_table(
    alice, bob, daily
):
    crowd_the_sketch(player=bob, daily=daily, games=copies.PER_HASH_LIMIT * 3)
    tables = copies.game_tables(deal_number=DEAL_NUMBER, log=WIN_LOG, won=True)

    with CaptureQueriesContext(connection) as queries:
        found = copies.copy_review(
            deal_number=DEAL_NUMBER, player_id=alice.pk, tables=tables, solver_line=""
        )

    # One lookup of the game's tables, one read of the few candidates' logs.
    assert len(queries) == 2
    lookup = queries[0]["sql"]
    # Each table's rows limited: a LATERAL ... LIMIT on PostgreSQL, a window on SQLite.
    assert (
        f"LIMIT {copies.PER_HASH_LIMIT}" in lookup or f"place <= {copies.PER_HASH_LIMIT}" in lookup
    )
    assert queries[1]["sql"].count("%s") == 0 and "IN (" in queries[1]["sql"]
    assert len(queries[1]["sql"].split("IN (")[1].split(")")[0].split(",")) <= copies.CANDIDATES
    # The crowd's games are "S" logs: nothing in common, so no flag.
    assert found.flags == []


@pytest.mark.postgres
def test_on_postgresql_the_lookup_reads_at_most_the_limit_per_hash(alice, bob, daily):
    sketch = crowd_the_sketch(player=bob, daily=daily, games=copies.PER_HASH_LIMIT * 3)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE games_gamefingerprint")
        cursor.execute(
            "EXPLAIN (ANALYZE, FORMAT JSON) " + copies._CANDIDATES_POSTGRES,
            [sketch, DEAL_NUMBER, alice.pk, 2**63 - 1, copies.PER_HASH_LIMIT, copies.CANDIDATES],
        )
        plan = cursor.fetchone()[0][0]["Plan"]

    scans = list(_nodes(plan, "Relation Name", "games_gamefingerprint"))
    assert scans
    read = sum(node["Actual Rows"] * node["Actual Loops"] for node in scans)
    assert read <= copies.SKETCH_SIZE * copies.PER_HASH_LIMIT
    assert GameFingerprint.objects.count() == copies.SKETCH_SIZE * copies.PER_HASH_LIMIT * 3


def _nodes(plan: dict, key: str, value: str):
    if plan.get(key) == value:
        yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child, key, value)


def test_the_review_queue_shows_the_game_copied_and_the_similarity(alice, bob, daily, admin_user):
    original = play_checked(bob, WIN_LOG)
    copy = play_checked(alice, swap(WIN_LOG, independent_pairs(WIN_LOG)[0]))
    client = Client()
    client.force_login(admin_user)

    html = client.get("/admin/games/flaggedgame/?flag=copied").content.decode()

    assert f">{copy.pk}<" in html
    assert f"plays the tables of game {original.pk}: 99% of the shorter game" in html
    assert str(original) in html and f"{copy.copy_similarity:.3f}"[:4] in html


def test_of_several_copies_the_earliest_game_is_named(alice, bob, make_player, daily):
    original = play_checked(bob, WIN_LOG)
    play_checked(make_player("carol"), WIN_LOG)

    copy = play_checked(alice, swap(WIN_LOG, independent_pairs(WIN_LOG)[0]))

    assert copy.copy_of == original


def test_a_submission_leaves_the_check_to_the_job_which_runs_once_per_game(alice, bob, daily):
    original = play_ranked(bob, WIN_LOG)
    practice, _ = game_submit(player=bob, deal=DEAL, log=WIN_LOG[:300], practice=True)
    other, _ = game_submit(player=bob, deal="EH1-N-AAAAAAB", log="S W9")
    copy = play_ranked(alice, swap(WIN_LOG, independent_pairs(WIN_LOG)[0]))

    # Stored and ranked at once; compared and fingerprinted by the job only.
    assert [game.fingerprint_pending for game in (original, practice, other, copy)] == [
        True,
        True,
        False,
        True,
    ]
    assert not GameFingerprint.objects.exists() and "copied" not in copy.flags

    assert copies_checked() == 3
    assert copies_checked() == 0

    copy.refresh_from_db()
    original.refresh_from_db()
    # In the order they were stored: the later game is the copy, never the original.
    assert copy.copy_of == original and "copied" in copy.flags
    assert original.copy_of is None and "copied" not in original.flags
    assert original.review["tables"] > 100 and original.review["closest_game"] is None
    assert not Game.objects.filter(fingerprint_pending=True).exists()


def test_the_job_leaves_a_game_stored_a_moment_ago_for_its_next_run(alice, daily):
    game = play_ranked(alice, WIN_LOG)

    assert copies_check(now=game.created_at) == 0
    assert (
        copies_check(now=game.created_at + datetime.timedelta(seconds=copies.SETTLE_SECONDS)) == 1
    )


def test_a_copy_found_after_a_moderator_cleared_the_game_holds_it_again(
    alice, bob, make_player, daily
):
    carol = make_player("carol")
    original = play_ranked(bob, WIN_LOG)
    cleared = play_ranked(alice, swap(WIN_LOG, independent_pairs(WIN_LOG)[0]))
    voided = play_ranked(carol, swap(WIN_LOG, independent_pairs(WIN_LOG)[1]))
    # Cleared of its other flags before the job ran.
    assert cleared.review_state == ReviewState.FLAGGED
    game_review_clear(game=cleared, moderator=None, reason="plausible pace")
    game_void(game=voided, reason="cheating")

    copies_checked()

    cleared.refresh_from_db()
    voided.refresh_from_db()
    original.refresh_from_db()
    assert cleared.review_state == ReviewState.HELD and cleared.copy_of == original
    assert not BoardEntry.objects.filter(player=alice).exists()
    assert voided.review_state == ReviewState.VOIDED and voided.copy_of == original
    assert "copied" not in original.flags


@pytest.mark.postgres
def test_one_run_of_the_job_works_at_a_time_on_postgresql(alice, daily):
    game = play_ranked(alice, WIN_LOG)
    # Another run at work holds the lock (its own connection, as another worker's).
    other = connection.copy()
    other.connect()
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", [copies._RUN_LOCK])
        assert copies_checked() == 0
        game.refresh_from_db()
        assert game.fingerprint_pending
        # Given back before the connection closes: its server process may take a
        # moment to end, and the lock with it.
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [copies._RUN_LOCK])
    finally:
        other.close()

    assert copies_checked() == 1


# --- Detours undone at once -----------------------------------------------------------


def raw_tables(log: list[str]) -> frozenset[int]:
    """Every table a log passes through, undone ones too (what the check read before
    it removed the undone branches)."""
    return copies.tables_of(table_hashes(DEAL_NUMBER, log), won=replay(DEAL, log).is_won)


def undo_detours(log: list[str], *, count: int, below: int) -> list[str]:
    """The log with `count` detours undone at once inserted: a legal move (after up to 12
    stock taps, for a card of the waste), then undos back to where the log was; each
    move chosen so that its table's hash is below `below` and in no table of the log."""
    game, out, taken, inserted = Table(DEAL), [], set(raw_tables(log)), 0
    for token in log:
        for taps in range(13):
            tapped = game.copy()
            tapped.play_log(["S"] * taps)
            for move in [] if taps and not tapped.is_legal("S") else list(tapped.legal_actions()):
                if move in ("S", "U") or inserted == count or (taps and move[0] != "W"):
                    continue
                trial = tapped.copy()
                trial.play(move)
                table = trial.table_hash()
                if table < below and table not in taken:
                    taken.add(table)
                    detour = ["S"] * taps + [move] + ["U"] * (taps + 1)
                    game.play_log(detour)
                    out += detour
                    inserted += 1
        game.play(token)
        out.append(token)
    assert inserted == count
    return out


def test_a_copy_padded_with_undone_moves_chosen_by_their_hash_is_flagged(alice, bob, daily):
    original = play_checked(bob, WIN_LOG)
    sixth_smallest = sorted(raw_tables(WIN_LOG))[5]
    copy_log = undo_detours(WIN_LOG, count=21, below=sixth_smallest)
    played = replay(DEAL, copy_log)
    assert played.is_won and played.score == replay(DEAL, WIN_LOG).score
    # Read with its undone tables, the copy's 24 smallest hashes would share 5 of the
    # original's: under the gate of 6, so the exact measure would never run.
    by_hash = len(
        set(heapq.nsmallest(24, raw_tables(copy_log)))
        & set(heapq.nsmallest(24, raw_tables(WIN_LOG)))
    )
    assert by_hash < copies.MIN_SKETCH_SHARED

    copy = play_checked(alice, copy_log)

    assert "copied" in copy.flags and copy.copy_of == original
    assert copy.copy_similarity == pytest.approx(1.0)
    # Its line is the original's: the undone detours leave no table.
    assert copies.game_tables(deal_number=DEAL_NUMBER, log=copy_log, won=True) == (
        copies.game_tables(deal_number=DEAL_NUMBER, log=WIN_LOG, won=True)
    )


def played_back_detours(log: list[str], *, count: int, below: int) -> list[str]:
    """The log with `count` detours played back by hand inserted (a card moved to another
    column and back: two moves, no undo), each chosen so that the table between
    them has a hash below `below` and is in no table of the log."""
    game, out, taken, inserted = Table(DEAL), [], set(raw_tables(log)), 0
    for token in log:
        for move in list(game.legal_actions()):
            if inserted == count or not (len(move) == 2 and move.isdigit()):
                continue
            away = game.copy()
            away.play(move)
            table = away.table_hash()
            if table < below and table not in taken and away.is_legal(move[::-1]):
                back = away.copy()
                back.play(move[::-1])
                if back.position() == game.position():
                    taken.add(table)
                    game.play_log([move, move[::-1]])
                    out += [move, move[::-1]]
                    inserted += 1
        game.play(token)
        out.append(token)
    assert inserted == count
    return out


def test_a_copy_padded_with_detours_played_back_chosen_by_their_hash_is_flagged(alice, bob, daily):
    """Detours played back by hand are no undo: they add tables of the copy's own, here
    20 chosen to sort before the original's 24th by hash. They are in no order the
    copy can choose (the sketch's is keyed by the server's secret), and the copy
    still holds every table of the original."""
    original = play_checked(bob, WIN_LOG)
    copy_log = played_back_detours(WIN_LOG, count=20, below=sorted(raw_tables(WIN_LOG))[23])
    assert replay(DEAL, copy_log).is_won and len(copy_log) == len(WIN_LOG) + 40

    copy = play_checked(alice, copy_log)

    assert "copied" in copy.flags and copy.copy_of == original
    assert copy.copy_similarity == pytest.approx(1.0)


def test_the_line_drops_each_move_with_the_undo_that_took_it_back():
    assert copies.line_of(["W9", "U", "37", "14", "U", "U", "35"]) == [6]
    assert copies.line_of(["S", "37", "U", "S"]) == [0, 3]
    # An undone stock tap goes too.
    assert copies.line_of(["S", "U", "37"]) == [2]


def test_honest_wins_padded_with_undone_moves_are_still_not_flagged(alice, bob, daily):
    sixth_smallest = sorted(raw_tables(WIN_LOG))[5]
    play_checked(bob, undo_detours(WIN_LOG, count=21, below=sixth_smallest))

    honest = play_checked(alice, undo_detours(solver_win(), count=21, below=sixth_smallest))

    assert "copied" not in honest.flags and honest.copy_of is None


# --- Who played first: the server's clock ---------------------------------------------


def streamed_attempt(player, log: list[str], *, started: datetime.datetime, at: list[int]):
    """The player's attempt of today as its socket left it: `log` streamed, the server
    having received action i at `at[i]` (ms since the epoch)."""
    attempt, _ = attempt_start(player=player, date=timezone.now().date())
    start_ms = int(started.timestamp() * 1000)
    Attempt.objects.filter(pk=attempt.pk).update(
        started_at=started,
        log=" ".join(log),
        times=[time - start_ms for time in at],
        saved_at=started + datetime.timedelta(milliseconds=at[-1] - start_ms),
        version=len(log),
    )


def live_copy(cut: float) -> tuple[list[str], list[str]]:
    """What a copier watching the hero's win streamed, and their game: the hero's first
    `cut` of actions, then the solver's own finish."""
    prefix = WIN_LOG[: int(len(WIN_LOG) * cut)]
    finish = solve(DEAL_NUMBER, prefix, work=FIRST_WIN).log
    assert finish
    return prefix, [*prefix, *finish]


def live_copy_streamed(hero, copier, cut: float, *, seed: int) -> list[str]:
    """The hero's win streamed over 45 minutes, and the copier's attempt playing each of
    its first `cut` of actions as it arrived (the server has it a second or two after
    the hero's); the copier's whole game to submit (`live_copy`)."""
    rng = random.Random(seed)
    hero_start = timezone.now() - datetime.timedelta(minutes=45)
    hero_at, time = [], int(hero_start.timestamp() * 1000) + 4_000
    for _ in WIN_LOG:
        time += rng.randint(800, 6_000)
        hero_at.append(time)
    prefix, copy_log = live_copy(cut)
    copier_at = [time + rng.randint(700, 2_500) for time in hero_at[: len(prefix)]]
    for index in range(1, len(copier_at)):
        copier_at[index] = max(copier_at[index], copier_at[index - 1])
    streamed_attempt(hero, WIN_LOG, started=hero_start, at=hero_at)
    streamed_attempt(
        copier, prefix, started=hero_start - datetime.timedelta(minutes=3), at=copier_at
    )
    return copy_log


@pytest.mark.parametrize("cut", [0.9, 0.7])
@pytest.mark.parametrize("copier_submits_first", [True, False])
def test_a_live_copy_is_flagged_and_the_player_it_followed_never(
    alice, bob, daily, cut, copier_submits_first
):
    """The copier watches the hero live and plays each action as it arrives (the server
    has it a second or two after the hero's), then finishes alone; whoever submits
    first, the copier is the one flagged, copying the hero."""
    hero, copier = alice, bob
    copy_log = live_copy_streamed(hero, copier, cut, seed=7)

    if copier_submits_first:
        copy, _ = game_submit(player=copier, deal=DEAL, log=copy_log)
        copies_checked()
        # The hero's attempt is still open: nothing to compare the copy with yet.
        copy.refresh_from_db()
        assert "copied" not in copy.flags
        original, _ = game_submit(player=hero, deal=DEAL, log=WIN_LOG)
    else:
        original, _ = game_submit(player=hero, deal=DEAL, log=WIN_LOG)
        copies_checked()
        copy, _ = game_submit(player=copier, deal=DEAL, log=copy_log)
    copies_checked()

    copy.refresh_from_db()
    original.refresh_from_db()
    assert "copied" in copy.flags and copy.copy_of == original
    # Held off the boards until a moderator reviews it, whichever was submitted first.
    assert copy.review_state == ReviewState.HELD
    assert not BoardEntry.objects.filter(player=copier).exists()
    assert BoardEntry.objects.filter(player=hero).exists()
    assert "copied" not in original.flags and original.copy_of is None
    if copier_submits_first:
        # Found when the hero's game was checked: the copy had every table later.
        assert copy.review["followed_game"] == original.pk
        assert (
            copy.review["followed_game_reached_later"] == copy.review["followed_game_common_tables"]
        )
        assert original.review["closest_game"] is None
    else:
        assert copy.review["closest_game_reached_earlier"] == 0
    if cut == 0.7:
        # Too little of the hero's game for the similarity alone: its opening, followed.
        assert copy.copy_similarity < copies.COPY_SIMILARITY


def test_honest_games_played_at_the_same_time_are_not_flagged_in_either_order(
    alice, bob, make_player, daily
):
    start = timezone.now() - datetime.timedelta(minutes=45)
    start_ms = int(start.timestamp() * 1000)
    solver = solver_win()
    streamed_attempt(
        alice, WIN_LOG, started=start, at=[start_ms + 3_000 * (i + 1) for i in range(len(WIN_LOG))]
    )
    streamed_attempt(
        bob,
        solver,
        started=start,
        at=[start_ms + 2_000 * (i + 1) + 500 for i in range(len(solver))],
    )

    first, _ = game_submit(player=bob, deal=DEAL, log=solver)
    copies_checked()
    second, _ = game_submit(player=alice, deal=DEAL, log=WIN_LOG)
    copies_checked()

    for game in (first, second):
        game.refresh_from_db()
        assert "copied" not in game.flags and game.copy_of is None
    assert "followed_game" not in first.review


def test_a_copy_of_an_attempt_never_submitted_is_held_once_its_day_closed(alice, bob, daily):
    """The hero plays on and never submits; the copier followed the hero's actions a
    second or two behind and submitted a win. Nothing flags it while the day runs
    (there is no game to compare it with); once the day has closed, the hero's
    saved line is read as a source and the copier's game is held off the boards."""
    hero, copier = alice, bob
    copy_log = live_copy_streamed(hero, copier, 0.9, seed=11)
    copy, _ = game_submit(player=copier, deal=DEAL, log=copy_log)
    copies_checked()
    copy.refresh_from_db()
    assert "copied" not in copy.flags and BoardEntry.objects.filter(player=copier).exists()

    # While the day runs, the open attempt is not read.
    assert unsubmitted_attempts_check(today=daily.date) == 0
    tomorrow = daily.date + datetime.timedelta(days=1)
    read = unsubmitted_attempts_check(today=tomorrow)

    copy.refresh_from_db()
    assert read == 2  # the hero's, read; the copier's, submitted, only marked
    assert "copied" in copy.flags and copy.copy_of is None
    assert copy.review["followed_attempt"] == Attempt.objects.get(player=hero).pk
    assert copy.review_state == ReviewState.HELD
    assert not BoardEntry.objects.filter(player=copier).exists()
    assert not Attempt.objects.filter(copy_checked=False).exists()
    assert unsubmitted_attempts_check(today=tomorrow) == 0  # each attempt read once
