"""Reads of accounts. Reads never write (an absent `Account` row reads as its defaults)."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.core.cache import cache

from easyharp_site.accounts.models import Account

# The session key that holds the generation a session was signed in under (`sessions`).
SESSION_GENERATION_KEY = "_accounts_sessions_generation"


def sessions_generation(*, player_id: int) -> int:
    """The player's current session generation (0 until they first sign out everywhere)."""
    generation = (
        Account.objects.filter(player_id=player_id)
        .values_list("sessions_generation", flat=True)
        .first()
    )
    return generation or 0


def email_delivery_failed_key(player_id: int) -> str:
    """The cache key that marks a confirming link that could not be sent."""
    return f"accounts:email-delivery-failed:{player_id}"


@dataclass(frozen=True)
class AccountView:
    """What a player sees of their own account."""

    username: str
    email: str | None
    email_pending: str | None
    # The last confirming link could not be sent: the player should ask again.
    email_delivery_failed: bool


def account_view(*, player: User) -> AccountView:
    """The signed-in player's own account: their addresses, confirmed and pending."""
    account = Account.objects.filter(player=player).first()
    pending = account.email_pending if account is not None and account.email_pending else None
    return AccountView(
        username=player.get_username(),
        email=player.email or None,
        email_pending=pending,
        email_delivery_failed=pending is not None
        and bool(cache.get(email_delivery_failed_key(player.pk))),
    )


# The game settings a player may keep with their account, and what each may be:
# the same as the browser's (games/static/games/settings.js).
GAME_SETTINGS: dict[str, tuple[object, ...]] = {
    "doubleClick": (True, False),
    "fourColour": (True, False),
    "cardStyle": ("classic", "large"),
}


def account_settings(*, player: User) -> dict[str, object]:
    """The game settings kept with the player's account (only those set)."""
    kept = Account.objects.filter(player=player).values_list("settings", flat=True).first()
    return {name: value for name, value in (kept or {}).items() if name in GAME_SETTINGS}


@dataclass(frozen=True)
class ReminderView:
    """The player's daily reminder, as they see it."""

    # The UTC hour of the mail, or None: no reminders.
    hour: int | None
    # The language of the mail ("" until reminders are first asked for).
    language: str
    # Where reminders go: the confirmed address; None, and they wait for one.
    email: str | None


def reminder_view(*, player: User) -> ReminderView:
    """The signed-in player's daily reminder."""
    hour, language = Account.objects.filter(player=player).values_list(
        "reminder_hour", "language"
    ).first() or (None, "")
    return ReminderView(hour=hour, language=language, email=player.email or None)
