"""Stored data of the daily challenge: the deal of each day, the games played, each
player's ranked attempt of a day, and the log of what moderators did."""

from __future__ import annotations

import datetime

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
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
    par_log = models.TextField(
        blank=True,
        help_text="The solver's winning log (its line) when it ran; submitted games are "
        "compared with it.",
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


class ReviewState(models.TextChoices):
    """Where a game stands with the moderators (see docs/FAIR_PLAY.md)."""

    NONE = "", "Not flagged"
    FLAGGED = "flagged", "Flagged, waiting for review"
    # Flagged as no person could have played it (`too_fast`): on no board until cleared.
    HELD = "held", "Held off the boards, waiting for review"
    CLEARED = "cleared", "Cleared by a moderator"
    VOIDED = "voided", "Voided by a moderator"


class Game(models.Model):
    """A game submitted by a player: the deal, the log, and what the server computed.

    `score`, `moves`, `won` and `actions` always come from the server's own replay
    of `log` under `rules_version`; a client never supplies them.

    A game is either the player's ranked game of a day (`ranked`: the game that
    closed their attempt, the only one that can be on a board) or practice.
    A ranked game carries the server-measured `duration_ms` and, when a hint
    was asked during the attempt, `assisted` (shown, ranked on no board).
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
        help_text="The day whose deal this game played, submitted that day (ranked or practice).",
    )
    ranked = models.BooleanField(
        default=False, help_text="The player's ranked game of the day (else practice)."
    )
    assisted = models.BooleanField(
        default=False, help_text="A hint was asked during the ranked attempt: on no board."
    )
    duration_ms = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Milliseconds from the attempt's start to the submission (ranked games).",
    )
    times = models.JSONField(
        null=True,
        blank=True,
        help_text="Per-action times the client sent (ms since the attempt's start), ranked games.",
    )
    review = models.JSONField(
        default=dict, blank=True, help_text="Plausibility signals computed at submission."
    )
    review_flags = models.CharField(
        max_length=200, blank=True, help_text="Why the game was flagged: reason codes."
    )
    review_state = models.CharField(
        max_length=8, choices=ReviewState.choices, default=ReviewState.NONE, blank=True
    )
    copy_of = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The earlier game of another player whose play this ranked game copies "
        "most (see games.copies); empty for none, or for the solver's line.",
    )
    copy_similarity = models.FloatField(
        null=True,
        blank=True,
        help_text="The share of this game's tables that are those of the game it copies "
        "(or of the solver's line), when it was flagged as a copy.",
    )
    fingerprint_pending = models.BooleanField(
        default=False,
        db_default=False,
        help_text="A daily game whose tables the copy check has not read yet: the job "
        "(games.copies.pending_fingerprints_check) compares a ranked one with the earlier "
        "games and keeps its sketch.",
    )
    attempt = models.OneToOneField(
        "Attempt",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="game",
        help_text="The ranked attempt this game closed (ranked games only).",
    )
    device = models.CharField(
        max_length=32,
        blank=True,
        help_text="The browser it was submitted from (its known-device id), if it has one.",
    )
    address = models.CharField(
        max_length=32,
        blank=True,
        help_text="A digest of the address it was submitted from (IPv6 by its /64 block).",
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
            # One ranked game per player and day, whatever races the requests run.
            models.UniqueConstraint(
                fields=["player", "daily"],
                condition=Q(ranked=True),
                name="game_one_ranked_per_player_and_day",
            ),
        ]
        indexes = [
            models.Index(fields=["player", "-created_at"], name="game_player_recent"),
            models.Index(fields=["daily", "player"], name="game_daily_player"),
            # The moderators' queue: the few games waiting for review.
            models.Index(
                fields=["created_at"],
                condition=Q(review_state__in=["flagged", "held"]),
                name="game_review_queue",
            ),
            # A ranked game's rehearsal check: the day's games from its device or address.
            models.Index(
                fields=["daily", "device"], condition=~Q(device=""), name="game_daily_device"
            ),
            models.Index(
                fields=["daily", "address"], condition=~Q(address=""), name="game_daily_address"
            ),
            # The copy check's work: the few games stored since its last run.
            models.Index(
                fields=["id"],
                condition=Q(fingerprint_pending=True),
                name="game_fingerprint_pending",
            ),
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

    @property
    def flags(self) -> list[str]:
        """The reason codes the game was flagged for (empty when it was not)."""
        return self.review_flags.split()


class GameFingerprint(models.Model):
    """One hash of a daily game's bottom-k sketch (`games.copies`): the tables it passed.

    Derived from the game's log, kept so that a later game of the same deal
    finds the games it may copy through an index, without reading the day's
    games. The player is kept here too, so that a player's own games are left
    out inside the index lookup.
    """

    deal_number = models.PositiveIntegerField()
    hash = models.BigIntegerField()
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="+")
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )

    class Meta:
        indexes = [
            # Covering on PostgreSQL: the lookup reads the index alone.
            models.Index(
                fields=["deal_number", "hash"],
                include=["game", "player"],
                name="fingerprint_deal_hash",
            ),
        ]

    def __str__(self) -> str:
        return f"table {self.hash} of game {self.game_id}"


class FlaggedGame(Game):
    """The moderators' review queue in the admin: flagged games not yet cleared or voided."""

    class Meta:
        proxy = True
        verbose_name = "flagged game"
        verbose_name_plural = "review queue (flagged games)"


class Attempt(models.Model):
    """A player's one ranked attempt at one day's deal.

    Started explicitly (the server's clock starts then), saved as it goes
    (`log`, and `saves`: `[elapsed ms, actions]` of each save, the progress
    over time that review reads; streamed action by action, `times` holds when
    the server received each one), and closed by the submission that stores
    its ranked game (which points back at it). At most one per player and day.
    A save names the `version` it extends, so that a device that fell behind
    cannot write its older game over a longer one saved from another.
    """

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"

    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="attempts"
    )
    daily = models.ForeignKey(DailyDeal, on_delete=models.PROTECT, related_name="attempts")
    started_at = models.DateTimeField()
    assisted = models.BooleanField(default=False, help_text="A hint was asked while it was open.")
    log = models.TextField(blank=True, help_text="The game so far, as last saved.")
    saved_at = models.DateTimeField(null=True, blank=True)
    saves = models.JSONField(
        default=list, blank=True, help_text="[ms since the start, actions] of each save."
    )
    version = models.PositiveIntegerField(
        default=0, help_text="0 when started, one more with each save that changed the log."
    )
    times = models.JSONField(
        default=list,
        blank=True,
        help_text="Once actions are streamed (games.streams): the server's receive time of "
        "each action of the log, in ms since the start (one per action); empty before.",
    )
    copy_checked = models.BooleanField(
        default=False,
        help_text="Its day closed and the copy check read it: a game of the day that "
        "followed it, never submitted, is a copy of it (games.copies).",
    )
    # Closed by its ranked game (`Game.attempt`, reached here as `game`): the
    # game's insert is the whole of closing it, so no state is kept twice.

    class Meta:
        ordering = ["-started_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["player", "daily"], name="attempt_one_per_player_and_day"
            ),
        ]
        indexes = [
            # The copy check's attempts still to read: those of the last closed day.
            models.Index(
                fields=["id"],
                condition=models.Q(copy_checked=False),
                name="attempt_copy_unchecked",
            ),
        ]

    def __str__(self) -> str:
        return f"attempt of {self.player_id} on {self.daily_id} ({self.status})"

    @property
    def ranked_game(self) -> Game | None:
        """The ranked game that closed the attempt, or None while it is open."""
        try:
            return self.game
        except ObjectDoesNotExist:
            return None

    @property
    def status(self) -> str:
        return self.Status.OPEN if self.ranked_game is None else self.Status.CLOSED

    @property
    def is_open(self) -> bool:
        return self.ranked_game is None

    @property
    def closed_at(self) -> datetime.datetime | None:
        game = self.ranked_game
        return game.created_at if game is not None else None

    def action_times(self) -> list[int]:
        """The server's time of each action of the saved log (ms since the start).

        A streamed action's is when the server received it; an action that
        came in a save of the whole log (`PATCH`) has the time of the save that
        brought it (of the last save, past the saves kept), the latest it can
        have been played.
        """
        actions = len(self.log.split())
        saved_ms = (
            max(0, int((self.saved_at - self.started_at).total_seconds() * 1000))
            if self.saved_at is not None
            else 0
        )
        by_save: list[int] = []
        for elapsed_ms, count in self.saves:
            # A save that shortened the game dropped the later actions' times.
            del by_save[count:]
            by_save.extend([int(elapsed_ms)] * (count - len(by_save)))
        times = [int(time) for time in self.times[:actions]]
        for index in range(len(times), actions):
            at = by_save[index] if index < len(by_save) else saved_ms
            times.append(max(at, times[-1] if times else 0))
        return times

    @property
    def current_log(self) -> str:
        """The game so far: the ranked game's log once submitted, else the last save."""
        game = self.ranked_game
        return game.log if game is not None else self.log


class ModerationAction(models.Model):
    """What a moderator did, to whom, when and why (kept for ever, never edited)."""

    class Kind(models.TextChoices):
        VOID = "void", "Void a game"
        CLEAR = "clear", "Clear a flagged game"
        BAN = "ban", "Ban a player"
        UNBAN = "unban", "Lift a ban"

    kind = models.CharField(max_length=5, choices=Kind.choices)
    moderator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Who did it (empty: the service itself).",
    )
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="moderation_actions"
    )
    game = models.ForeignKey(
        Game,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="moderation_actions",
    )
    reason = models.CharField(max_length=500)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.kind} of {self.player_id} at {self.created_at:%Y-%m-%d %H:%M}"
