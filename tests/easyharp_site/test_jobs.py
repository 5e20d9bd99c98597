"""The jobs: scheduled by `migrate`, each one harmless to run twice, their last runs shown.

Each job runs here as the worker runs it (its function, or through django-q2's
own task path); tests/easyharp_site/test_jobs_worker.py runs the real worker.
"""

from __future__ import annotations

import datetime
import os
from typing import Any

import pytest
import redis
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from django_q.models import OrmQ, Schedule
from django_q.tasks import async_task

from easyharp_site.accounts import mail
from easyharp_site.accounts.models import Account, Mail
from easyharp_site.job_broker import JobBroker, job_lock_seconds
from easyharp_site.jobs import job_schedule
from games import tasks as games_tasks
from games.models import DailyDeal
from leaderboards import tasks as board_tasks
from leaderboards.models import BoardEntry
from ranking import tasks as ranking_tasks
from tests.fixtures import play_ranked
from tests.jobs import run_queued_jobs
from tests.mailserver import MailServer

pytestmark = pytest.mark.django_db

JOBS = {
    "prepare deals": ("games.tasks.deals_prepare", 60),
    "check copies": ("ranking.tasks.copies_check", 1),
    "close days": ("leaderboards.tasks.days_close", 10),
    "build the board mirror": ("leaderboards.tasks.board_mirror_refresh", 1),
    "settle standings": ("leagues.tasks.standings_refresh", 10),
    "check boards": ("ranking.tasks.boards_check", 60),
    "fold board counts": ("leaderboards.tasks.board_counts_fold_all", 1),
    "send reminders": ("leaderboards.tasks.reminders_send", 5),
    "end races": ("races.tasks.races_end", 1),
}


def test_migrate_schedules_every_periodic_job_once_and_keeps_its_next_run() -> None:
    stored = {s.name: (s.func, s.minutes) for s in Schedule.objects.all()}
    assert stored == JOBS
    Schedule.objects.filter(name="close days").update(
        next_run=datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC)
    )

    call_command("migrate", verbosity=0)

    assert Schedule.objects.count() == len(JOBS)
    assert Schedule.objects.get(name="close days").next_run.year == 2030


def message(to: str = "carol@example.org") -> EmailMessage:
    return EmailMessage("Hello", "A link: https://example.org/x", "from@example.org", [to])


def test_a_mail_job_run_twice_sends_the_mail_once(smtp: MailServer) -> None:
    queued = mail.mail_queue(message())

    assert mail.mail_send(queued.pk) == "sent"
    assert mail.mail_send(queued.pk) == "already sent, or being sent"

    assert smtp.receive()["Subject"] == "Hello"
    assert smtp.nothing()
    queued.refresh_from_db()
    assert queued.sent_at is not None and queued.body == ""  # the link is not kept
    assert queued.attempts == 1


def test_a_mail_claimed_by_a_run_still_sending_is_not_sent_by_another(smtp: MailServer) -> None:
    queued = mail.mail_queue(message())
    far = datetime.datetime(2100, 1, 1, tzinfo=datetime.UTC)
    Mail.objects.filter(pk=queued.pk).update(claimed_until=far)

    assert mail.mail_send(queued.pk) == "already sent, or being sent"
    # The claim of a run that died lapses: the next try sends it.
    Mail.objects.filter(pk=queued.pk).update(claimed_until=far.replace(year=2000))
    assert mail.mail_send(queued.pk) == "sent"
    assert smtp.receive()["Subject"] == "Hello"


def test_a_mail_that_failed_is_sent_by_the_next_try(settings: Any, smtp: MailServer) -> None:
    port = settings.EMAIL_PORT
    settings.EMAIL_PORT = 1  # nobody listens there
    queued = mail.mail_queue(message())

    with pytest.raises(OSError):
        mail.mail_send(queued.pk)
    assert run_queued_jobs() == 0  # failed again: still queued
    settings.EMAIL_PORT = port

    assert smtp.receive()["Subject"] == "Hello"
    queued.refresh_from_db()
    assert queued.sent_at is not None and queued.attempts == 3


def test_a_mail_asked_for_in_a_change_that_rolled_back_is_never_queued() -> None:
    from django.db import transaction

    with pytest.raises(RuntimeError), transaction.atomic():
        mail.mail_queue(message())
        raise RuntimeError("the change failed")

    assert Mail.objects.count() == 0
    assert run_queued_jobs() == 0


@pytest.mark.redis
def test_the_mirror_job_run_twice_builds_each_day_once(
    settings: Any, alice: Any, daily: Any
) -> None:
    settings.BOARD_MIRROR = True
    play_ranked(alice, "S")
    redis.Redis.from_url(django_settings.REDIS_URL).flushdb()

    first = board_tasks.board_mirror_refresh()
    second = board_tasks.board_mirror_refresh()

    assert f"{daily.date.isoformat()}: 1 players" in first
    assert second == "complete"


def test_the_mirror_job_does_nothing_when_the_mirror_is_off(settings: Any) -> None:
    settings.BOARD_MIRROR = False
    assert board_tasks.board_mirror_refresh() == "the board mirror is off"


def test_the_board_check_job_mends_drift_once_and_then_finds_the_boards_in_step(
    alice: Any, daily: Any
) -> None:
    play_ranked(alice, "S")
    BoardEntry.objects.filter(player=alice).delete()  # a copy lost

    first = ranking_tasks.boards_check()
    second = ranking_tasks.boards_check()

    assert f"{daily.date.isoformat()}: " in first and "mended" in first
    assert BoardEntry.objects.filter(player=alice).exists()
    # The last three days, today included: a missed close is still caught.
    assert "mended" not in second and second.count("in step") == 3


def test_the_reminder_job_run_twice_reminds_each_player_once(alice: Any, daily: Any) -> None:
    alice.email = "alice@example.org"
    alice.save()
    # Asked for on an earlier day, at midnight: due whatever the time now.
    Account.objects.create(player=alice, reminder_hour=0, language="en")

    first = board_tasks.reminders_send()
    second = board_tasks.reminders_send()

    assert first == f"{daily.date.isoformat()}: 1 reminder(s) queued, 0 left"
    assert second == f"{daily.date.isoformat()}: 0 reminder(s) queued, 0 left"
    assert Mail.objects.filter(to="alice@example.org").count() == 1


def test_the_reminder_job_waits_for_the_days_deal() -> None:
    assert board_tasks.reminders_send() == "today's deal is not stored yet: no reminders"


def staff_client() -> Client:
    staff = get_user_model().objects.create_user(username="ops", is_staff=True)
    client = Client()
    client.force_login(staff)
    return client


def test_healthz_details_tell_anyone_whether_each_job_works_never_when_it_runs(
    today: datetime.date,
) -> None:
    DailyDeal.objects.create(date=today - datetime.timedelta(days=1), number=3)
    async_task("leaderboards.tasks.days_close", sync=True)
    Schedule.objects.update(next_run=timezone.now() + datetime.timedelta(minutes=5))
    # A job whose worker is gone: due two periods ago.
    Schedule.objects.filter(name="settle standings").update(
        next_run=timezone.now() - datetime.timedelta(minutes=25)
    )

    for client in (Client(), player_client()):
        details = client.get("/healthz/?details=1").json()

        jobs = {job["name"]: job for job in details["jobs"]}
        assert set(jobs) == set(JOBS)
        assert all(set(job) == {"name", "ok", "late"} for job in jobs.values())
        assert jobs["close days"]["ok"] is True
        assert jobs["settle standings"] == {"name": "settle standings", "ok": None, "late": True}
        assert jobs["close days"]["late"] is False
        assert details["queue"] == {"waiting": 0, "taken": 0}


def player_client() -> Client:
    player = get_user_model().objects.create_user(username="player")
    client = Client()
    client.force_login(player)
    return client


def test_healthz_details_show_each_jobs_last_run_and_the_queue(today: datetime.date) -> None:
    DailyDeal.objects.create(date=today - datetime.timedelta(days=1), number=3)
    # Through django-q2's own path, as the worker runs a scheduled job.
    async_task("leaderboards.tasks.days_close", sync=True)
    mail.mail_queue(message())

    plain = Client().get("/healthz/").json()
    details = staff_client().get("/healthz/?details=1").json()

    assert plain == {"status": "ok"}
    jobs = {job["name"]: job for job in details["jobs"]}
    assert set(jobs) == set(JOBS)
    closed = jobs["close days"]["last_run"]
    assert closed["ok"] is True and closed["result"] == "1 day(s) closed"
    assert closed["started"] <= closed["stopped"]
    assert jobs["settle standings"]["last_run"] is None  # never run yet
    assert details["queue"] == {"waiting": 1, "taken": 0}  # the mail


# --- Locks, timeouts and the heartbeat ----------------------------------------------


def test_a_taken_job_is_locked_for_its_own_timeout_then_the_retry(
    settings: Any, tmp_path: Any
) -> None:
    settings.TASK_TIMEOUT_SECONDS, settings.TASK_RETRY_SECONDS = 120, 30
    settings.TASK_HEARTBEAT_FILE = tmp_path / "heartbeat"
    settings.EMAIL_TIMEOUT = 20
    mail.mail_queue(EmailMessage("Hi", "Body", to=["carol@example.org"]))
    async_task("games.tasks.deals_prepare", task_name="plain")
    broker = JobBroker(list_key=django_settings.Q_CLUSTER["name"])

    before = timezone.now()
    taken = [broker.dequeue()[0] for _ in range(2)]
    locks = {OrmQ.objects.get(pk=pk).name(): OrmQ.objects.get(pk=pk).lock for pk, _ in taken}

    # A mail stops when its claim (4 x EMAIL_TIMEOUT) lapses; the other job at TASK_TIMEOUT_SECONDS.
    assert job_lock_seconds({"timeout": 80}) == 110 and job_lock_seconds({}) == 150
    assert (
        110
        <= (locks[next(n for n in locks if n.startswith("mail"))] - before).total_seconds()
        < 115
    )
    assert 150 <= (locks["plain"] - before).total_seconds() < 155
    # Each look at the queue is the worker's heartbeat.
    assert settings.TASK_HEARTBEAT_FILE.exists()


def test_a_schedule_stores_the_timeout_of_its_job() -> None:
    job_schedule(name="slow one", func="games.tasks.deals_prepare", minutes=5, timeout=300)
    job_schedule(name="quick one", func="ranking.tasks.copies_check", minutes=5)

    assert Schedule.objects.get(name="slow one").kwargs == "q_options={'timeout': 300}"
    assert Schedule.objects.get(name="quick one").kwargs == ""


def test_the_prepare_job_runs_the_solver_at_the_heavy_works_niceness(
    settings: Any, monkeypatch: Any
) -> None:
    niceness = [0]

    def nice(increment: int) -> int:
        niceness[0] += increment
        return niceness[0]

    monkeypatch.setattr(os, "nice", nice)
    settings.HEAVY_WORK_NICENESS = 10
    settings.DAILY_DEAL_DAYS_AHEAD = 1

    games_tasks.deals_prepare()
    assert niceness == [10]
    games_tasks.deals_prepare()  # already there: no lower
    assert niceness == [10]
