"""Races: up to eight players play the same fresh deal at once, each on their own table.

- `Race`: the deal (a random one, never a day's), the time limit, and its
  moments: created, started (play begins at `starts_at`, after the
  countdown), ended (`ended_at`, by a win, the time limit or everyone
  leaving). Its code is the link's secret.
- `Racer`: one player in one race, with their game as the server stored it
  action by action (`log`, `times` since `starts_at`, `version`) and what
  the others see of it (score, moves, cards on the foundations), whether a
  moderator banned them during the race (then last, never the winner), and once
  the race is over their rank and their game (`games.Game`, practice of no
  day, replayable by link).

Once over, any of its players may make its `rematch`: a new race for the same
players, which the others join in one click from the race's page.
"""

from __future__ import annotations

import datetime

from django.conf import settings
from django.db import models
from django.db.models import Q

from games.models import Game
from games.rules import Deal

# The most players a race holds.
RACERS_MAX = 8
# The time limits a race may have, in minutes.
TIME_LIMITS_MINUTES = (5, 10, 15, 30)
# From the start to the first action: everyone gets the same count.
COUNTDOWN = datetime.timedelta(seconds=5)
# A player with no action nor heartbeat for this long is shown as away (a page
# sends a heartbeat every 10 seconds).
AWAY_AFTER = datetime.timedelta(seconds=30)
# A lobby nobody started within this long is closed.
LOBBY_KEPT = datetime.timedelta(days=1)


class Race(models.Model):
    class End(models.TextChoices):
        WON = "won", "A player won"
        TIME = "time", "The time limit ran out"
        LEFT = "left", "Every player left"
        CANCELLED = "cancelled", "Never started"

    code = models.CharField(max_length=32, unique=True, help_text="The link's secret.")
    host = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="races_hosted",
        help_text="Who starts the race: its creator, or the next player in if they left the lobby.",
    )
    deal_number = models.PositiveIntegerField()
    time_limit = models.DurationField()
    created_at = models.DateTimeField()
    starts_at = models.DateTimeField(
        null=True, blank=True, help_text="When play begins (the start plus the countdown)."
    )
    ends_at = models.DateTimeField(
        null=True, blank=True, help_text="`starts_at` plus the time limit."
    )
    ended_at = models.DateTimeField(null=True, blank=True)
    end = models.CharField(max_length=9, choices=End.choices, blank=True)
    winner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="races_won",
    )
    rematch = models.OneToOneField(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="rematch_of",
        help_text="The race its players made to play again once it was over (one per race).",
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # The job's look for races whose time ran out and lobbies left waiting.
            models.Index(
                fields=["ends_at"], condition=Q(ended_at__isnull=True), name="race_running"
            ),
        ]

    def __str__(self) -> str:
        return f"race {self.code}"

    @property
    def deal_code(self) -> str:
        return Deal(self.deal_number).code

    def status(self, now: datetime.datetime) -> str:
        """`lobby`, `countdown`, `running` or `over` at `now`, whether or not the end
        is stored yet: a race is over from its time limit on, whoever looks."""
        if self.ended_at is not None or (self.ends_at is not None and now >= self.ends_at):
            return "over"
        if self.starts_at is None:
            return "lobby"
        return "countdown" if now < self.starts_at else "running"


class Racer(models.Model):
    race = models.ForeignKey(Race, on_delete=models.CASCADE, related_name="racers")
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="racers"
    )
    joined_at = models.DateTimeField()
    log = models.TextField(blank=True, help_text="The actions stored, canonical, in order.")
    times = models.JSONField(
        default=list,
        blank=True,
        help_text="When the server received each action (ms since the race's start).",
    )
    version = models.PositiveIntegerField(default=0, help_text="One more with each write.")
    score = models.PositiveIntegerField(default=0)
    moves = models.PositiveIntegerField(default=0)
    on_foundations = models.PositiveIntegerField(default=0)
    won = models.BooleanField(default=False)
    last_action_ms = models.PositiveIntegerField(null=True, blank=True)
    seen_at = models.DateTimeField(
        null=True, blank=True, help_text="The player's last action or heartbeat."
    )
    left_at = models.DateTimeField(null=True, blank=True)
    banned = models.BooleanField(
        default=False,
        help_text="Banned by a moderator during the race: out of it, last, never the winner.",
    )
    rank = models.PositiveIntegerField(null=True, blank=True, help_text="Once the race is over.")
    game = models.OneToOneField(
        Game,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="racer",
        help_text="The player's game, stored when the race ended (none without an action).",
    )

    class Meta:
        ordering = ["joined_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["race", "player"], name="racer_once_per_race"),
        ]
        indexes = [models.Index(fields=["player", "-joined_at"], name="racer_player_recent")]

    def __str__(self) -> str:
        return f"{self.player_id} in {self.race_id}"
