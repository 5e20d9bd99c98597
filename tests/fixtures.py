"""Fixtures the whole suite shares (loaded by `pytest_plugins`): players, API clients,
today's deal.

Today's deal is pinned to deal 4 (`EH1-N-AAAAAAE`), for which the conformance
vectors hold a clean win, so the tests can submit real won and unfinished
games of the day. A game reaches a board only as the player's ranked game:
`submit_ranked` (API) and `play_ranked` (services) start the day's attempt first.
"""

from __future__ import annotations

import datetime
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import connection
from django.db.models import F
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from easyharp_site import loop_pool
from games import copies
from games.models import Attempt, DailyDeal, Game
from games.services import attempt_assist, attempt_start
from leaderboards import changes, live
from leaderboards.services import board_entries_offer, board_mirror_write
from ranking.actions import copies_check, game_submit
from tests.paths import GAME_VECTORS

VECTORS = GAME_VECTORS
DEAL = "EH1-N-AAAAAAE"
DEAL_NUMBER = 4
# A full cycle of the stock: 59 taps and one recycle leave the table as dealt,
# so a log prefixed with it plays the same game with 60 more moves.
STOCK_CYCLE = ["S"] * 60
# The password `make_player` gives every player.
PASSWORD = "a-long-passphrase"


def _vectors() -> list[dict[str, Any]]:
    return [json.loads(line) for line in VECTORS.read_text().splitlines() if line.strip()]


VECTOR_GAMES = _vectors()
WIN = next(v for v in VECTOR_GAMES if v["deal"] == DEAL and v.get("won"))
WIN_LOG: list[str] = WIN["log"].split()


@pytest.fixture
def today() -> datetime.date:
    return timezone.now().date()


@pytest.fixture
def midday() -> Iterator[datetime.datetime]:
    """The clock at noon (UTC) of today, ticking on: a test that looks an hour back,
    or half an hour past midnight, holds at whatever hour it runs."""
    noon = timezone.now().replace(hour=12, minute=0, second=0, microsecond=0)
    with time_machine.travel(noon, tick=True):
        yield noon


@pytest.fixture
def daily(db: None, today: datetime.date) -> DailyDeal:
    """Today's deal, pinned to deal 4."""
    return DailyDeal.objects.create(date=today, number=DEAL_NUMBER)


@pytest.fixture
def make_player(db: None) -> Callable[[str], AbstractBaseUser]:
    def make(username: str) -> AbstractBaseUser:
        return get_user_model().objects.create_user(username=username, password=PASSWORD)

    return make


@pytest.fixture
def alice(make_player: Callable[[str], AbstractBaseUser]) -> AbstractBaseUser:
    return make_player("alice")


@pytest.fixture
def bob(make_player: Callable[[str], AbstractBaseUser]) -> AbstractBaseUser:
    return make_player("bob")


@pytest.fixture
def board_reads(monkeypatch: pytest.MonkeyPatch) -> list[live.BoardKey]:
    """The boards the live hubs read from the database (`leaderboards.live._board_read`),
    in the order they were read."""
    reads: list[live.BoardKey] = []
    board_read = live._board_read

    def counted(board: live.BoardKey, player_ids: Any = ()) -> Any:
        reads.append(board)
        return board_read(board, player_ids)

    monkeypatch.setattr(live, "_board_read", counted)
    return reads


def client_for(player: AbstractBaseUser | None) -> APIClient:
    """An API client signed in with the player's token (anonymous for None)."""
    client = APIClient()
    if player is not None:
        token, _ = Token.objects.get_or_create(user=player)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def anon() -> APIClient:
    return APIClient()


def submit(
    client: APIClient,
    log: str | list[str],
    deal: str = DEAL,
    times: list[Any] | None = None,
    **headers: str,
) -> Any:
    """POST a game; `headers` as Django META keys (HTTP_IDEMPOTENCY_KEY=...)."""
    body: dict[str, Any] = {"deal": deal, "log": log}
    if times is not None:
        body["times"] = times
    return client.post("/api/games/", body, format="json", **headers)


def attempt_url(date: datetime.date | None = None) -> str:
    return f"/api/daily/{(date or timezone.now().date()).isoformat()}/attempt/"


def start(client: APIClient, date: datetime.date | None = None) -> Any:
    """POST: start (or find) the player's ranked attempt of `date` (today)."""
    return client.post(attempt_url(date), format="json")


# The pace the helpers below give a ranked game, as if its player had played it:
# above review's floor (games.review.MIN_MS_PER_ACTION), so that it is not held.
HUMAN_MS_PER_ACTION = 200


def at_human_pace(attempt: int, log: str | list[str]) -> None:
    """Move an attempt's start back by the time a person takes to play `log`."""
    actions = len(log.split()) if isinstance(log, str) else len(log)
    Attempt.objects.filter(pk=attempt).update(
        started_at=F("started_at") - datetime.timedelta(milliseconds=HUMAN_MS_PER_ACTION * actions)
    )


def submit_ranked(client: APIClient, log: str | list[str], **kwargs: Any) -> Any:
    """Start today's attempt, then submit its game at a human pace: the player's ranked
    game of the day."""
    started = start(client)
    assert started.status_code in (200, 201)
    at_human_pace(started.json()["id"], log)
    return submit(client, log, **kwargs)


def rewind(player: AbstractBaseUser, seconds: float) -> None:
    """Move the start of the player's attempt `seconds` back, as if it began then."""
    Attempt.objects.filter(player=player).update(
        started_at=F("started_at") - datetime.timedelta(seconds=seconds)
    )


def play_ranked(player: AbstractBaseUser, log: str | list[str], deal: str = DEAL) -> Game:
    """`submit_ranked` through the services."""
    attempt, _ = attempt_start(player=player, date=timezone.now().date())
    at_human_pace(attempt.pk, log)
    game, _ = game_submit(player=player, deal=deal, log=log)
    return game


def close_day(daily: DailyDeal) -> None:
    """Make `daily` a day that has closed, as if the clock had moved on (it becomes the
    day before the first one stored): its games are public to everyone from then on."""
    first = DailyDeal.objects.order_by("date").values_list("date", flat=True)[0]
    DailyDeal.objects.filter(pk=daily.pk).update(date=first - datetime.timedelta(days=1))
    daily.refresh_from_db()


def play_assisted(player: AbstractBaseUser, log: str | list[str], deal: str = DEAL) -> Game:
    """`play_ranked` with a hint asked during the attempt: the ranked game is assisted."""
    attempt, _ = attempt_start(player=player, date=timezone.now().date())
    at_human_pace(attempt.pk, log)
    assert attempt_assist(player=player, deal=deal)
    game, _ = game_submit(player=player, deal=deal, log=log)
    return game


def stored_game(
    *,
    player: AbstractBaseUser,
    daily: DailyDeal,
    score: int,
    moves: int,
    won: bool = False,
    at: datetime.datetime | None = None,
    duration_ms: int | None = None,
    ranked: bool = True,
    announce: bool = False,
    **fields: Any,
) -> Game:
    """A game of the day stored directly and offered to the boards (no engine involved).

    For leaderboard tests that need many exact scores and moves quickly. It is
    the player's ranked game of the day unless `ranked` is False. With
    `announce` it reaches every derived store as a submission's does
    (`leaderboards.changes.game_ranked`: the boards, the mirror, the player's record
    and the live boards) rather than only the boards and their mirror.
    `fields` are other fields of the game (`assisted`).
    """
    game = Game.objects.create(
        player=player,
        deal_number=daily.number,
        log="S",
        score=score,
        moves=moves,
        won=won,
        actions=moves,
        rules_version="EH1",
        daily=daily,
        created_at=at or timezone.now(),
        ranked=ranked,
        duration_ms=duration_ms,
        **fields,
    )
    if announce:
        changes.game_ranked(game=game)
    elif board_entries_offer(game=game):
        board_mirror_write(player_id=game.player_id, date=daily.date, game=game)
    return game


def at_once(*calls: Callable[[], Any]) -> list[Any]:
    """Run the calls in threads released together; returns results (or exceptions)."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(index: int, call: Callable[[], Any]) -> None:
        barrier.wait()
        try:
            results[index] = call()
        except Exception as error:  # collected: the test asserts there are none
            results[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def end_loop_sessions() -> int:
    """End the event loops' sessions on this test database (`easyharp_site.loop_pool`),
    as a restart of the database would; how many."""
    with other_session() as other:
        row = other.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND application_name = %s",
            [loop_pool.APPLICATION_NAME],
        ).fetchone()
    assert row is not None
    return int(row[0])


def other_session() -> Any:
    """A PostgreSQL session of its own on the test database (Django's connection
    settings), autocommitting: it sees only what has committed."""
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    return psycopg.connect(**params, autocommit=True)


def copies_checked() -> int:
    """Run the copy check's job as the worker does, for every game stored until now;
    how many games it checked."""
    later = timezone.now() + datetime.timedelta(seconds=copies.SETTLE_SECONDS)
    return copies_check(now=later)
