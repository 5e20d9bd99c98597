"""`manage.py check_boards` on the embedded default (SQLite), as `make run` runs it.

The check's statements are plain SQL; PostgreSQL runs them in the other tests
of the check (tests/leaderboards/test_check_boards.py). Here, on a fresh
SQLite database: yesterday closed and settled, today with a ranked game on the
boards, and copies of both broken behind the services' back. The check finds
the differences, mends them, and then finds both days in step.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ranking.management.commands.check_boards import DRIFT_FOUND
from tests.servers import ROOT, manage, server_env

PLAYED_AND_BROKEN = """
import datetime
from django.contrib.auth import get_user_model
from django.utils import timezone
from games.models import DailyDeal
from leaderboards.models import BoardEntry, FinalRank
from leaderboards.services import day_close
from leagues.services import day_points_settle
from tests.fixtures import DEAL_NUMBER, stored_game

today = timezone.now().date()
yesterday = today - datetime.timedelta(days=1)
days = [DailyDeal.objects.create(date=date, number=DEAL_NUMBER) for date in (yesterday, today)]
ann, ben = (get_user_model().objects.create_user(name, password="x") for name in ("ann", "ben"))
for daily in days:
    stored_game(player=ann, daily=daily, score=100, moves=120, won=True, announce=True)
    stored_game(player=ben, daily=daily, score=40, moves=90, announce=True)
day_close(date=yesterday)
day_points_settle(date=yesterday)
print(BoardEntry.objects.filter(date=today, player=ann, board="moves").delete()[0])
print(FinalRank.objects.filter(entry__date=yesterday, entry__player=ben).update(rank=9))
"""


def check_boards(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "check_boards", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_check_boards_finds_and_mends_drift_on_sqlite(tmp_path: Path) -> None:
    env = server_env(tmp_path / "db.sqlite3")
    manage(env, "migrate", "--noinput")
    broken = manage(env, "shell", "--no-imports", "-c", PLAYED_AND_BROKEN)
    assert broken.stdout.split() == ["1", "1"]

    found = check_boards(env)
    assert found.returncode == DRIFT_FOUND, found.stdout + found.stderr
    assert "entry: player" in found.stdout and "final_rank: player" in found.stdout
    assert found.stdout.count("not mended (run with --repair)") == 2

    mended = check_boards(env, "--repair")
    assert mended.stdout.count(" mended: ") == 2, mended.stdout + mended.stderr

    again = check_boards(env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.count("in step with its games") == 3  # the last three days, today included
