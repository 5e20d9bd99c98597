"""A real SMTP server for the tests that send mail: aiosmtpd on a free loopback port.

The `smtp` fixture starts one for a test and points Django's SMTP backend at
it; `mail_server()` does the same for a longer-lived server (the browser
tests' forked daphne). Every message it receives is parsed and queued, so a
test reads the mail a player would get and follows its link. Mail is sent by
a job: reading the inbox first runs the jobs queued (`tests.jobs`), as the
worker would have.
"""

from __future__ import annotations

import email
import email.policy
import logging
import queue
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import EmailMessage
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from tests.jobs import run_queued_jobs
from tests.servers import free_port

LINK = re.compile(r"https?://\S+")
# aiosmtpd logs every SMTP command at INFO.
logging.getLogger("mail.log").setLevel(logging.WARNING)


class _Inbox:
    """aiosmtpd's handler: every message, parsed, into a queue."""

    def __init__(self) -> None:
        self.received: queue.Queue[EmailMessage] = queue.Queue()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        self.received.put(message)
        return "250 Message accepted for delivery"


class MailServer:
    """A running SMTP server and what it received."""

    def __init__(self, host: str, port: int, inbox: _Inbox, *, runs_jobs: bool = True) -> None:
        self.host = host
        self.port = port
        self._inbox = inbox
        # Whether reading runs the queued jobs here first (not when a real worker sends).
        self._runs_jobs = runs_jobs

    @property
    def settings(self) -> dict[str, Any]:
        """The Django settings that send mail here."""
        return {
            "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "EMAIL_HOST": self.host,
            "EMAIL_PORT": self.port,
            "EMAIL_HOST_USER": "",
            "EMAIL_HOST_PASSWORD": "",
            "EMAIL_USE_TLS": False,
            "EMAIL_TIMEOUT": 5,
        }

    def receive(self, timeout: float = 10) -> EmailMessage:
        """The next message received (waits up to `timeout` seconds for it)."""
        if not self._runs_jobs:
            try:
                return self._inbox.received.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no mail arrived within {timeout} s") from None
        # The mail may be queued after this call began (by a server in another
        # process, a browser's request): the queue is run again until it comes.
        deadline = time.monotonic() + timeout
        while True:
            run_queued_jobs()
            try:
                return self._inbox.received.get(timeout=0.2)
            except queue.Empty:
                if time.monotonic() > deadline:
                    raise AssertionError(f"no mail arrived within {timeout} s") from None

    def nothing(self, timeout: float = 0.5) -> bool:
        """True when no message arrives within `timeout` seconds."""
        if self._runs_jobs:
            run_queued_jobs()
        try:
            message = self._inbox.received.get(timeout=timeout)
        except queue.Empty:
            return True
        self._inbox.received.put(message)
        return False


def body_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())


def link_in(message: EmailMessage) -> str:
    """The one link of a message."""
    links = LINK.findall(body_of(message))
    assert len(links) == 1, links
    return str(links[0])


@contextmanager
def mail_server(*, runs_jobs: bool = True) -> Iterator[MailServer]:
    """An aiosmtpd server on a free loopback port, stopped at the end."""
    inbox = _Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield MailServer("127.0.0.1", port, inbox, runs_jobs=runs_jobs)
    finally:
        controller.stop()


@pytest.fixture
def smtp(settings: Any) -> Iterator[MailServer]:
    """A real SMTP server for this test, with Django sending its mail there."""
    with mail_server() as server:
        for name, value in server.settings.items():
            setattr(settings, name, value)
        yield server
