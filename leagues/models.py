"""Friends, leagues and the weekly and monthly standings.

- `Follow`: one player follows another (their friends board shows both).
- `League` and `Membership`: a private group of players with its own boards
  and standings, joined with an unguessable invite code. `League.members`
  counts its members, kept under the league's row lock so the member limit
  holds however many join at once.
- `DayPoints`: each player's points of one closed day (`docs/RULES.md` 9.5),
  computed from the day's score board once the day has closed, and
  `SettledDay`, which days are computed (and which must be again because a
  game was voided or a player banned since).
- `Standing` and `StandingsPeriod`: each player's sum over a week or a month,
  ranked, as the standings job left them, and that period's player count.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Follow(models.Model):
    # No index of its own: `follow_once` (follower, followee) serves lookups by follower.
    follower = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="follows", db_index=False
    )
    followee = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="followed_by"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["follower", "followee"], name="follow_once"),
            models.CheckConstraint(
                condition=~models.Q(follower=models.F("followee")), name="follow_not_self"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.follower_id} follows {self.followee_id}"


class League(models.Model):
    slug = models.SlugField(max_length=60, unique=True)
    name = models.CharField(max_length=60)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="leagues_owned"
    )
    invite_code = models.CharField(max_length=40, unique=True)
    members = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    # No index of its own: `membership_once` (league, player) serves lookups by league.
    league = models.ForeignKey(
        League, on_delete=models.CASCADE, related_name="memberships", db_index=False
    )
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["league", "player"], name="membership_once"),
        ]

    def __str__(self) -> str:
        return f"{self.player_id} in {self.league_id}"


class DayPoints(models.Model):
    """A player's rank on a closed day's score board and the points it earned."""

    date = models.DateField()
    # Derived rows, rewritten a million at a time by the standings job: no
    # per-row foreign-key check in the database (accounts are deactivated,
    # never deleted; Django's own cascade still removes these with a player).
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="day_points",
        db_constraint=False,
    )
    rank = models.PositiveIntegerField()
    points = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["date", "player"], name="daypoints_once"),
        ]

    def __str__(self) -> str:
        return f"{self.date} {self.player_id}: {self.points}"


class SettledDay(models.Model):
    """A closed day whose points are computed; `stale` when its board changed since."""

    date = models.DateField(unique=True)
    players = models.PositiveIntegerField()
    settled_at = models.DateTimeField()
    stale = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"{self.date}{' (stale)' if self.stale else ''}"


class Period(models.TextChoices):
    WEEK = "week", "Week"
    MONTH = "month", "Month"


class StandingsPeriod(models.Model):
    """One computed week or month: how many players it ranks and the last day it counts."""

    period = models.CharField(max_length=5, choices=Period.choices)
    start = models.DateField()
    players = models.PositiveIntegerField()
    settled_through = models.DateField(null=True)
    computed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["period", "start"], name="standingsperiod_once"),
        ]

    def __str__(self) -> str:
        return f"{self.period} of {self.start}"


class Standing(models.Model):
    """A player's place in one week's or month's standings."""

    period = models.CharField(max_length=5, choices=Period.choices)
    start = models.DateField()
    # Derived rows, as DayPoints's.
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="standings",
        db_constraint=False,
    )
    rank = models.PositiveIntegerField()
    points = models.PositiveIntegerField()
    days = models.PositiveIntegerField()
    best = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["period", "start", "player"], name="standing_once"),
        ]
        indexes = [models.Index(fields=["period", "start", "rank"], name="standing_rank")]

    def __str__(self) -> str:
        return f"{self.period} of {self.start}: {self.player_id} #{self.rank}"
