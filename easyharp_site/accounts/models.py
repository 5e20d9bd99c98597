"""What accounts keeps beside Django's own user row.

Players are `django.contrib.auth` users. An `Account` row holds what the user
model has no field for: the e-mail address waiting for its confirming link
(`User.email` holds only a confirmed address, so nothing ever mails an
unconfirmed one), the generation of the player's sessions (raised by "sign
out everywhere"), when the account was deleted, and the player's daily
reminder (the hour they chose, the last day reminded, the language of their
mail). It is created on first need; a player without one has no pending
address, generation 0, no reminder and is not deleted.

`PlayerName` holds the look-alike keys of players' names (see
`easyharp_site.accounts.names`).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from easyharp_site.accounts.names import KEY_MAX_LENGTH


class Account(models.Model):
    player = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="account",
    )
    email_pending = models.EmailField(
        blank=True, help_text="Address waiting for its confirming link (not used for anything)."
    )
    email_requested_at = models.DateTimeField(
        null=True, blank=True, help_text="When the pending address was asked for."
    )
    sessions_generation = models.PositiveIntegerField(
        default=0, help_text="Sessions signed in under an older generation are signed out."
    )
    deleted_at = models.DateTimeField(null=True, blank=True)
    settings = models.JSONField(
        default=dict,
        blank=True,
        help_text="The player's game settings (double click, four colours, card style).",
    )
    reminder_hour = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="The UTC hour (0-23) of the daily reminder mail; empty: no reminders.",
    )
    reminded_on = models.DateField(
        null=True,
        blank=True,
        help_text="The last day reminded, or passed over (the reminder was set after its hour).",
    )
    language = models.CharField(
        max_length=8,
        blank=True,
        help_text="The language of the player's reminders: the page's when they asked for them.",
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(reminder_hour__lte=23), name="account_reminder_hour_of_a_day"
            )
        ]
        indexes = [
            # The reminder job reads only the players who asked for reminders.
            models.Index(
                fields=["reminder_hour"],
                name="account_reminders",
                condition=Q(reminder_hour__isnull=False),
            )
        ]

    def __str__(self) -> str:
        return f"account of player {self.player_id}"


class ReservedUsername(models.Model):
    """The username of a deleted account, kept from sign-ups until `reserved_until`.

    Stored as a digest of the name as sign-up compares it (NFKC, case-folded):
    the reservation needs no copy of the name the player asked to be erased.
    """

    digest = models.CharField(max_length=64, primary_key=True)
    reserved_until = models.DateTimeField()

    def __str__(self) -> str:
        return f"username reserved until {self.reserved_until:%Y-%m-%d}"


class PlayerName(models.Model):
    """One look-alike key of a player's name; unique, so no two players' names look alike."""

    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="name_keys"
    )
    key = models.CharField(max_length=KEY_MAX_LENGTH, unique=True)

    def __str__(self) -> str:
        return self.key


class Mail(models.Model):
    """A message to a player, stored with the change that asked for it and sent by a job.

    The row is written in the request's transaction, and the job that sends it
    queued in the same transaction (the job queue is a table of the same
    database): a change that did not happen mails nothing, and a mail asked for
    survives any restart. A sending claims the row until `claimed_until`, so
    two runs of the job never send it at once, and `sent_at` makes sending it
    again a no-op; the body, which may hold a one-time link, is emptied once
    it is sent. A mail with `expires_at` (a reminder of a day) is dropped
    unsent once that moment has passed.
    """

    to = models.EmailField()
    subject = models.CharField(max_length=300)
    body = models.TextField()
    from_email = models.CharField(max_length=300)
    headers = models.JSONField(
        default=dict, blank=True, help_text="Headers of its own (a reminder's List-Unsubscribe)."
    )
    expires_at = models.DateTimeField(
        null=True, blank=True, help_text="Not sent after this moment (a reminder's day is over)."
    )
    # Marked in the cache when the sending fails, so the account page says to ask again.
    failure_key = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        indexes = [
            models.Index(
                fields=["created_at"], name="mail_waiting", condition=models.Q(sent_at=None)
            )
        ]

    def __str__(self) -> str:
        return f"mail {self.pk} ({'sent' if self.sent_at else 'waiting'})"
