"""Keeps each player's look-alike keys in step with their name, however the player is saved."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db.models.signals import post_save
from django.dispatch import receiver

from easyharp_site.accounts.services import player_name_keys_store


@receiver(post_save, sender=get_user_model())
def player_saved(
    sender: type[User],
    instance: User,
    created: bool,
    update_fields: frozenset[str] | None,
    **kwargs: Any,
) -> None:
    # A log-in saves `last_login` alone: the name did not change.
    if update_fields is not None and sender.USERNAME_FIELD not in update_fields:
        return
    player_name_keys_store(player=instance)
