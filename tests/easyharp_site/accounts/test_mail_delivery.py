"""Sending mail never holds up a request: a failure is logged and the player told to retry.

Tests run the queued jobs in their own process (tests/jobs.py);
tests/easyharp_site/test_jobs_worker.py runs the real worker.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from django.core import mail as django_mail
from django.test import Client

from tests.fixtures import client_for
from tests.jobs import run_queued_jobs
from tests.servers import free_port, manage, server_env

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def no_mail_server(settings: Any) -> None:
    """SMTP settings that point at a loopback port where nothing listens."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = free_port()
    settings.EMAIL_USE_TLS = False
    settings.EMAIL_TIMEOUT = 2


def test_a_failed_sending_is_logged_and_the_account_page_says_to_ask_again(
    alice: Any, no_mail_server: None, caplog: pytest.LogCaptureFixture
) -> None:
    client = client_for(alice)

    with caplog.at_level(logging.ERROR, logger="easyharp_site.accounts.mail"):
        response = client.post("/api/auth/email/", {"email": "alice@example.org"}, format="json")
        # The request answers at once; the mail's job fails on its own time.
        assert response.status_code == 202
        assert run_queued_jobs() == 0

    assert "Could not send the mail" in caplog.text
    assert "example.org" in caplog.text and "alice@example.org" not in caplog.text
    assert client.get("/api/auth/me/").json()["email_delivery_failed"] is True
    browser = Client()
    browser.force_login(alice)
    assert 'id="email-failed"' in browser.get("/accounts/").text


def test_a_password_reset_answers_the_same_when_the_mail_server_is_down(
    alice: Any, no_mail_server: None, caplog: pytest.LogCaptureFixture
) -> None:
    alice.email = "alice@example.org"
    alice.save()

    with caplog.at_level(logging.ERROR, logger="easyharp_site.accounts.mail"):
        response = Client().post(
            "/api/auth/password/reset/",
            {"email": "alice@example.org"},
            content_type="application/json",
        )
        assert response.status_code == 202
        assert "ask again" in response.json()["detail"]
        assert run_queued_jobs() == 0

    assert "Could not send the mail" in caplog.text


def test_a_full_queue_refuses_with_a_503_that_says_to_retry(alice: Any, settings: Any) -> None:
    settings.EMAIL_QUEUE_MAX = 0

    response = client_for(alice).post("/api/auth/email/", {"email": "a@example.org"}, format="json")

    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "mail_unavailable" and "try again" in error["message"]
    assert django_mail.outbox == []


SEND = (
    "from django.core.mail import EmailMessage; from easyharp_site.accounts import mail; "
    "sent = mail.mail_queue(EmailMessage('Hello from the test', 'Body', 'a@example.org', "
    "['b@example.org'])); sent.refresh_from_db(); print('sent' if sent.sent_at else 'waiting')"
)


def test_without_an_email_host_mail_goes_to_the_console(tmp_path: Path) -> None:
    env = server_env(tmp_path / "db.sqlite3", TASKS_RUN_AT_ONCE="true")
    env.pop("EMAIL_HOST", None)
    manage(env, "migrate", "--noinput")

    result = manage(env, "shell", "-c", SEND)

    assert "Subject: Hello from the test" in result.stdout
    assert "To: b@example.org" in result.stdout
    assert result.stdout.rstrip().endswith("sent")


def test_with_an_email_host_mail_goes_out_over_smtp_with_tls_by_default(tmp_path: Path) -> None:
    env = server_env(tmp_path / "db.sqlite3", EMAIL_HOST="smtp.example.org")
    show = "from django.conf import settings as s; print(s.EMAIL_BACKEND, s.EMAIL_USE_TLS)"

    result = manage(env, "shell", "-c", show)

    assert result.stdout.splitlines()[-1].split() == [
        "django.core.mail.backends.smtp.EmailBackend",
        "True",
    ]
