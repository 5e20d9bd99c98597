"""Mail to players, sent by a few threads of the server process, never by the request.

A request renders its message at once, in the active language (the one the
player reads the site in), and hands it over; the message is queued when the
request's transaction commits, so nothing is mailed about a change that did
not happen. `EMAIL_SEND_THREADS` threads send the queue through Django's mail
backend (SMTP with EMAIL_HOST, the console without). A failed sending is
logged and, when the caller asked, marked in the cache so that the player's
account page says to ask again; it never reaches the request, which has
already answered. More than `EMAIL_QUEUE_MAX` messages waiting means the mail
server is far behind: `mail_queue` then refuses with a 503 that says to try
again later.

Python threads do not survive a fork: a forked child starts a pool of its own.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import threading
from collections.abc import Mapping
from functools import partial
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.mail import EmailMessage
from django.db import transaction
from django.template.loader import render_to_string
from rest_framework import status

from easyharp_site.errors import ServiceError

logger = logging.getLogger(__name__)

# How long a failed sending stays marked for the player to see.
FAILURE_MARK_SECONDS = 24 * 3600

_lock = threading.Lock()
_executor: concurrent.futures.ThreadPoolExecutor | None = None
_waiting: set[concurrent.futures.Future[None]] = set()


def _reset_after_fork() -> None:
    global _lock, _executor, _waiting
    _lock = threading.Lock()
    _executor = None
    _waiting = set()


os.register_at_fork(after_in_child=_reset_after_fork)


def mail_render(*, to: str, template: str, context: Mapping[str, Any]) -> EmailMessage:
    """The message of `template` (`<template>_subject.txt`, `<template>_body.txt`), in the
    active language."""
    subject = "".join(render_to_string(f"{template}_subject.txt", dict(context)).splitlines())
    body = render_to_string(f"{template}_body.txt", dict(context))
    return EmailMessage(subject.strip(), body, settings.DEFAULT_FROM_EMAIL, [to])


def mail_queue(message: EmailMessage, *, failure_key: str | None = None) -> None:
    """Send `message` from a mail thread once the current transaction commits.

    Raises a 503 `mail_unavailable` error when too many messages already wait.
    `failure_key`, when given, is set in the cache if the sending fails and
    cleared when it succeeds.
    """
    if _queue_length() >= settings.EMAIL_QUEUE_MAX:
        logger.error("Mail queue full (%s waiting); refused a new message", _queue_length())
        raise ServiceError(
            "mail_unavailable",
            "Mail cannot be sent right now. Please try again in a few minutes.",
            status_code=status.HTTP_503_SERVICE_UNAVAILABLE,
        )
    transaction.on_commit(partial(_submit, message, failure_key))


def mail_wait(timeout: float) -> bool:
    """Wait until every queued message was sent or failed; False if some still wait."""
    with _lock:
        waiting = list(_waiting)
    _done, pending = concurrent.futures.wait(waiting, timeout=timeout)
    return not pending


def _queue_length() -> int:
    with _lock:
        return len(_waiting)


def _submit(message: EmailMessage, failure_key: str | None) -> None:
    global _executor
    if failure_key is not None:
        _mark(failure_key, failed=False)  # a new try: the last failure no longer stands
    with _lock:
        if _executor is None:
            _executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=max(1, settings.EMAIL_SEND_THREADS), thread_name_prefix="mail"
            )
        future = _executor.submit(_send, message, failure_key)
        _waiting.add(future)
    future.add_done_callback(_forget)


def _forget(future: concurrent.futures.Future[None]) -> None:
    with _lock:
        _waiting.discard(future)


def _send(message: EmailMessage, failure_key: str | None) -> None:
    try:
        message.send()
    except Exception:
        # Only the domain: the log needs no one's full address.
        domains = ", ".join(address.rpartition("@")[2] for address in message.to)
        logger.exception("Could not send the mail %r to an address at %s", message.subject, domains)
        if failure_key is not None:
            _mark(failure_key, failed=True)
    else:
        if failure_key is not None:
            _mark(failure_key, failed=False)


def _mark(key: str, *, failed: bool) -> None:
    try:
        if failed:
            cache.set(key, True, FAILURE_MARK_SECONDS)
        else:
            cache.delete(key)
    except Exception:
        logger.warning("Could not record the outcome of a mail in the cache", exc_info=True)
