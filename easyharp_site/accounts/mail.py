"""Mail to players: stored with the request's change, sent by the job worker.

A request renders its message at once, in the active language (the one the
player reads the site in), and stores it as a `Mail` row; the job that sends
it (`mail_send`) is queued in the same transaction, in the job queue's table
of the same database. So nothing is mailed about a change that did not happen,
and a mail asked for is sent even when the worker was stopped or killed
meanwhile: it waits in the queue until a worker takes it. A failed sending is
logged and, when the caller asked, marked in the cache so that the player's
account page says to ask again; the job is then tried again (Q_CLUSTER's
`max_attempts`). More than `EMAIL_QUEUE_MAX` mails waiting means the worker or
the mail server is far behind: `mail_queue` then refuses with a 503 that says
to try again later. A mail may carry headers of its own (a reminder's
`List-Unsubscribe`) and a moment after which it is no longer worth sending.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import F, Q
from django.template.loader import render_to_string
from django.utils import timezone
from rest_framework import status

from easyharp_site.accounts.models import Mail
from easyharp_site.errors import ServiceError
from easyharp_site.jobs import job_queue

logger = logging.getLogger(__name__)

# How long a failed sending stays marked for the player to see.
FAILURE_MARK_SECONDS = 24 * 3600


def mail_render(
    *,
    to: str,
    template: str,
    context: Mapping[str, Any],
    headers: Mapping[str, str] | None = None,
) -> EmailMessage:
    """The message of `template` (`<template>_subject.txt`, `<template>_body.txt`), in the
    active language, with `headers` of its own."""
    subject = "".join(render_to_string(f"{template}_subject.txt", dict(context)).splitlines())
    body = render_to_string(f"{template}_body.txt", dict(context))
    return EmailMessage(
        subject.strip(), body, settings.DEFAULT_FROM_EMAIL, [to], headers=dict(headers or {})
    )


def mail_waiting() -> int:
    """How many mails wait to be sent."""
    return Mail.objects.filter(sent_at=None).count()


@transaction.atomic
def mail_queue(
    message: EmailMessage,
    *,
    failure_key: str | None = None,
    expires_at: datetime.datetime | None = None,
    queue_max: int | None = None,
) -> Mail:
    """Store `message` (its extra headers too) and queue the job that sends it, both in
    the current transaction.

    Raises a 503 `mail_unavailable` error when `queue_max` mails (by default
    EMAIL_QUEUE_MAX) already wait. `failure_key`, when given, is set in the
    cache if the sending fails and cleared when it succeeds (and at once: a
    new try). A mail not sent by `expires_at` is dropped.
    """
    waiting = mail_waiting()
    if waiting >= (settings.EMAIL_QUEUE_MAX if queue_max is None else queue_max):
        log = logger.error if queue_max is None else logger.warning
        log("Mail queue full (%s waiting); refused a new message", waiting)
        raise ServiceError(
            "mail_unavailable",
            "Mail cannot be sent right now. Please try again in a few minutes.",
            status_code=status.HTTP_503_SERVICE_UNAVAILABLE,
        )
    (to,) = message.to
    mail = Mail.objects.create(
        to=to,
        subject=str(message.subject),
        body=str(message.body),
        from_email=message.from_email,
        headers=dict(message.extra_headers),
        failure_key=failure_key or "",
        expires_at=expires_at,
    )
    if failure_key:
        transaction.on_commit(lambda: _mark(failure_key, failed=False))
    # Stopped when its claim lapses, so that a job taken again after it finds the mail free.
    job_queue(
        "easyharp_site.accounts.mail.mail_send",
        mail.pk,
        name=f"mail {mail.pk}",
        timeout=int(_claim_time().total_seconds()),
    )
    return mail


def mail_send(mail_id: int) -> str:
    """The job: send mail `mail_id` unless it was sent already (or is being sent by
    another run, or its time has passed: then it is dropped); says what it did.

    The mail is claimed for a while first, by one conditional update, so a run
    that died while sending leaves it to the next try once the claim lapses. A
    failure is logged (with the address's domain only), marked for the player
    and raised, so that the queue tries the job again.
    """
    now = timezone.now()
    unclaimed = Mail.objects.filter(pk=mail_id, sent_at=None).filter(
        Q(claimed_until=None) | Q(claimed_until__lt=now)
    )
    if unclaimed.filter(expires_at__lte=now).delete()[0]:
        return "too late: dropped"
    claimed = unclaimed.update(claimed_until=now + _claim_time(), attempts=F("attempts") + 1)
    if not claimed:
        return "already sent, or being sent"
    mail = Mail.objects.get(pk=mail_id)
    message = EmailMessage(
        mail.subject, mail.body, mail.from_email, [mail.to], headers=mail.headers
    )
    try:
        message.send()
    except Exception:
        Mail.objects.filter(pk=mail_id).update(claimed_until=None)
        domain = mail.to.rpartition("@")[2]
        logger.exception("Could not send the mail %r to an address at %s", mail.subject, domain)
        if mail.failure_key:
            _mark(mail.failure_key, failed=True)
        raise
    # Sent: the link it carried is no longer kept.
    Mail.objects.filter(pk=mail_id).update(sent_at=timezone.now(), body="")
    if mail.failure_key:
        _mark(mail.failure_key, failed=False)
    return "sent"


def _claim_time() -> datetime.timedelta:
    # Longer than a sending can take (connecting, then each reply, each up to EMAIL_TIMEOUT).
    return datetime.timedelta(seconds=4 * settings.EMAIL_TIMEOUT)


def _mark(key: str, *, failed: bool) -> None:
    try:
        if failed:
            cache.set(key, True, FAILURE_MARK_SECONDS)
        else:
            cache.delete(key)
    except Exception:
        logger.warning("Could not record the outcome of a mail in the cache", exc_info=True)
