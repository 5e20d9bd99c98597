"""Days as the service names them: UTC dates written `YYYY-MM-DD`, in URLs and settings.

Imports nothing of the project and nothing that reads settings when imported,
so that the settings module itself reads its dates with it.
"""

from __future__ import annotations

import datetime
import re
from argparse import ArgumentTypeError

from django.http import Http404
from django.utils import timezone

# Exactly four digits, a dash, two digits, a dash, two digits. Python's own
# parser also takes `20261201` and `2026-W49-2`, which no page ever links to.
# ASCII digits only, written so that the API schema can state the same pattern.
ISO_DAY_PATTERN = "[0-9]{4}-[0-9]{2}-[0-9]{2}"
_ISO_DAY = re.compile(ISO_DAY_PATTERN)


def day_from_text(text: str) -> datetime.date:
    """The date written `YYYY-MM-DD` in `text`; ValueError for anything else."""
    if not _ISO_DAY.fullmatch(text):
        raise ValueError(f"{text!r} is not a date written YYYY-MM-DD")
    return datetime.date.fromisoformat(text)


def day_argument(text: str) -> datetime.date:
    """A `YYYY-MM-DD` date of a command's argument, or the argument error that says why."""
    try:
        return day_from_text(text)
    except ValueError:
        raise ArgumentTypeError(f"a date is written YYYY-MM-DD, not {text!r}") from None


def parse_day(text: str) -> datetime.date:
    """A `YYYY-MM-DD` date from a URL, or a 404 saying why (JSON under /api/, a page elsewhere)."""
    try:
        return day_from_text(text)
    except ValueError:
        raise Http404(f"{text!r} is not a date (YYYY-MM-DD).") from None


def today() -> datetime.date:
    """Today's date in UTC: the day whose deal is being played."""
    return timezone.now().date()


def utc_aware(moment: datetime.datetime) -> datetime.datetime:
    """`moment` as an aware datetime: SQLite hands back naive UTC datetimes to plain SQL."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=datetime.UTC)
