"""Stored data of the daily challenge: the deal of each day and the games played."""

from __future__ import annotations

import datetime

from django.conf import settings
from django.db import models
from django.db.models import Q

from games.rules import Deal


class DailyDeal(models.Model):
    """The deal everyone plays on one UTC date.

    Stored ahead of time (`services.daily_deals_prepare`), so that a later
    change of the method that picks deals never changes a past day.
    """

    date = models.DateField(unique=True)
    number = models.PositiveIntegerField(help_text="Deal number, 1..999,999.")
    par = models.PositiveIntegerField(
        null=True, blank=True, help_text="Fewest moves the solver found, when it ran."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-date"]

    def __str__(self) -> str:
        return f"{self.date.isoformat()} (deal {self.number})"

    @property
    def deal_code(self) -> str:
        """The day's deal code, e.g. `EH1-N-AAAAAAF`."""
        return Deal(self.number).code

    @property
    def closes_at(self) -> datetime.datetime:
        """The next UTC midnight: submissions after it no longer count for this day."""
        next_day = self.date + datetime.timedelta(days=1)
        return datetime.datetime.combine(next_day, datetime.time.min, tzinfo=datetime.UTC)


class Game(models.Model):
    """A game submitted by a player: the deal, the log, and what the server computed.

    `score`, `moves`, `won` and `actions` always come from the server's own replay
    of `log` under `rules_version`; a client never supplies them.
    """

    player = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        # Board player counts are stored; deleting a player with games would skew
        # them. Moderators deactivate players and void games instead.
        on_delete=models.PROTECT,
        related_name="games",
    )
    deal_number = models.PositiveIntegerField()
    log = models.TextField(help_text="Accepted actions in canonical form, separated by spaces.")
    score = models.PositiveIntegerField()
    moves = models.PositiveIntegerField()
    won = models.BooleanField()
    actions = models.PositiveIntegerField(help_text="Number of actions in the log, undos included.")
    rules_version = models.CharField(max_length=8)
    daily = models.ForeignKey(
        DailyDeal,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="games",
        help_text="The day whose boards this game counts for, if any.",
    )
    created_at = models.DateTimeField()
    voided_at = models.DateTimeField(null=True, blank=True)
    void_reason = models.CharField(max_length=200, blank=True)
    # NULL (not "") for "no key", so the unique constraint below skips keyless games.
    idempotency_key = models.CharField(max_length=255, null=True, blank=True)  # noqa: DJ001
    request_digest = models.CharField(
        max_length=64, blank=True, help_text="Digest of the submitted deal and log."
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["player", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False),
                name="game_unique_idempotency_key_per_player",
            ),
        ]
        indexes = [
            models.Index(fields=["player", "-created_at"], name="game_player_recent"),
            models.Index(fields=["daily", "player"], name="game_daily_player"),
        ]

    def __str__(self) -> str:
        return f"game {self.pk} by {self.player_id} on deal {self.deal_number}"

    @property
    def is_voided(self) -> bool:
        return self.voided_at is not None

    @property
    def deal_code(self) -> str:
        """The deal's code, e.g. `EH1-N-AAAAAAF`."""
        return Deal(self.deal_number).code
