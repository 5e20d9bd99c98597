"""The look-alike keys of players' names (see `easyharp_site.accounts.names`)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from easyharp_site.accounts.names import KEY_MAX_LENGTH


class PlayerName(models.Model):
    """One look-alike key of a player's name; unique, so no two players' names look alike."""

    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="name_keys"
    )
    key = models.CharField(max_length=KEY_MAX_LENGTH, unique=True)

    def __str__(self) -> str:
        return self.key
