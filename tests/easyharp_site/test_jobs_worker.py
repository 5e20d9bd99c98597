"""The real job worker (`manage.py qcluster`, as compose's `worker` runs it): a mail
queued while it is down, or killed, is sent once it is back; a job cut by a kill
is taken again once its own timeout and TASK_RETRY_SECONDS have passed; its
health check fails while it is dead; a SIGTERM lets the job under way finish.

The worker, the requests and this test share one SQLite file (the embedded
default); the mail goes to a real SMTP server (aiosmtpd).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from deploy.devserver import stop
from tests.mailserver import MailServer, link_in, mail_server
from tests.servers import ROOT, manage, process_group_gone, server_env

RESET = (
    "from easyharp_site.accounts.passwords import password_reset_request; "
    "password_reset_request(email='carol@example.org', "
    "link=lambda uid, token: f'https://example.org/reset/{uid}/{token}/')"
)
CAROL = (
    "from django.contrib.auth import get_user_model; "
    "get_user_model().objects.create_user('carol', 'carol@example.org', 'a long passphrase')"
)


def wait_for(state: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not state():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds} s: {what}")
        time.sleep(0.05)


class Database:
    """Reads of the shared SQLite file, as an operator would look."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def count(self, sql: str) -> int:
        with sqlite3.connect(self.path, timeout=20) as db:
            return int(db.execute(sql).fetchone()[0])

    def mails(self, *, sent: bool) -> int:
        state = "NOT NULL" if sent else "NULL"
        return self.count(f"SELECT count(*) FROM accounts_mail WHERE sent_at IS {state}")


@contextmanager
def worker(env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """`manage.py qcluster` in a process group of its own (its workers are children)."""
    process = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            stop(process)  # as `make run` stops it
            process.wait()


def kill(process: subprocess.Popen[bytes]) -> None:
    """Kill the worker and all its processes at once, as a crash or an OOM kill would."""
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    wait_for(lambda: process_group_gone(process.pid), "the worker's processes gone")


@pytest.fixture
def smtp_for_worker() -> Iterator[MailServer]:
    with mail_server(runs_jobs=False) as server:
        yield server


def test_a_reset_mail_queued_while_the_worker_was_killed_is_sent_after_its_restart(
    tmp_path: Path, smtp_for_worker: MailServer
) -> None:
    smtp = smtp_for_worker
    env = server_env(
        tmp_path / "db.sqlite3",
        EMAIL_HOST=smtp.host,
        EMAIL_PORT=str(smtp.port),
        EMAIL_USE_TLS="false",
        TASK_POLL_SECONDS="0.1",
        TASK_WORKERS="1",
        DAILY_DEAL_DAYS_AHEAD="1",
    )
    manage(env, "migrate", "--noinput")
    manage(env, "shell", "-c", CAROL)
    database = Database(tmp_path / "db.sqlite3")

    with worker(env) as first:
        # Up and working: it has sent a first mail (a queued job, run at once,
        # where its first scheduled job would wait for the scheduler's round).
        manage(env, "shell", "-c", RESET)
        assert smtp.receive(timeout=60)["To"] == "carol@example.org"
        wait_for(lambda: database.mails(sent=True) == 1, "the first mail marked sent")
        kill(first)

    manage(env, "shell", "-c", RESET)
    assert database.mails(sent=False) == 1
    assert smtp.nothing(timeout=0.5)  # nobody to send it

    with worker(env):
        message = smtp.receive(timeout=60)
        wait_for(lambda: database.mails(sent=True) == 2, "the mail marked sent")

    assert message["To"] == "carol@example.org"
    assert link_in(message).startswith("https://example.org/reset/")
    assert smtp.nothing(timeout=0.5)  # once


SLOW_JOB = (
    "from easyharp_site.jobs import job_queue; "
    "job_queue('tests.jobs.job_cut_once', {notes!r}, {seconds}, name='slow', timeout={timeout})"
)
# The slow job's own timeout, and the seconds after it before a job is taken again.
JOB_TIMEOUT = 8
RETRY = 1


def worker_env(tmp_path: Path) -> dict[str, str]:
    return server_env(
        tmp_path / "db.sqlite3",
        TASK_POLL_SECONDS="0.1",
        TASK_WORKERS="1",
        TASK_RETRY_SECONDS=str(RETRY),
        TASK_HEARTBEAT_FILE=str(tmp_path / "heartbeat"),
        TASK_HEARTBEAT_STALE_SECONDS="2",
        DAILY_DEAL_DAYS_AHEAD="1",
        PYTHONPATH=str(ROOT),
    )


def healthy(env: dict[str, str]) -> bool:
    """deploy/worker_healthcheck.py's verdict, as compose's health check runs it."""
    check = subprocess.run(
        [sys.executable, str(ROOT / "deploy" / "worker_healthcheck.py")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=60,
    )
    return check.returncode == 0


def starts(notes: Path) -> list[str]:
    return notes.read_text().splitlines() if notes.exists() else []


def test_a_job_cut_by_a_kill_is_taken_again_and_the_dead_worker_is_unhealthy(
    tmp_path: Path,
) -> None:
    env = worker_env(tmp_path)
    notes = tmp_path / "notes"
    manage(env, "migrate", "--noinput")
    assert not healthy(env)  # no worker has run yet

    with worker(env) as first:
        wait_for(lambda: healthy(env), "the worker healthy")
        manage(
            env, "shell", "-c", SLOW_JOB.format(notes=str(notes), seconds=60, timeout=JOB_TIMEOUT)
        )
        wait_for(lambda: len(starts(notes)) == 1, "the slow job started")
        kill(first)

    wait_for(lambda: not healthy(env), "the dead worker's check failing", seconds=30)
    cut = starts(notes)

    with worker(env):
        # Taken again once its timeout and the retry have passed since it was taken.
        wait_for(lambda: "done" in starts(notes), "the job run again to its end", seconds=60)
        wait_for(lambda: healthy(env), "the new worker healthy")

    assert cut == [cut[0]] and cut[0].startswith("started")
    assert [line.split()[0] for line in starts(notes)] == ["started", "started", "done"]


def test_a_worker_told_to_stop_finishes_the_job_under_way_then_exits(tmp_path: Path) -> None:
    env = worker_env(tmp_path)
    notes = tmp_path / "notes"
    manage(env, "migrate", "--noinput")

    with worker(env) as running:
        wait_for(lambda: healthy(env), "the worker healthy")
        manage(
            env, "shell", "-c", SLOW_JOB.format(notes=str(notes), seconds=3, timeout=JOB_TIMEOUT)
        )
        wait_for(lambda: len(starts(notes)) == 1, "the slow job started")
        running.send_signal(signal.SIGTERM)  # what `docker compose stop` sends
        running.wait(timeout=JOB_TIMEOUT + 30)
        wait_for(lambda: process_group_gone(running.pid), "the worker's processes gone")

    assert [line.split()[0] for line in starts(notes)] == ["started", "done"]
