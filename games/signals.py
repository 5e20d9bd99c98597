"""What the games app announces, for the apps that build on it (the leaderboards).

Both are sent inside the service's transaction, with the player's row locked,
so a receiver's writes commit or roll back with the game itself. Receivers
get the stored `game` as a keyword argument.
"""

from __future__ import annotations

from django.dispatch import Signal

# A game was stored (a new submission, not an idempotent retry).
game_stored = Signal()
# A game was voided by a moderator: it no longer counts anywhere.
game_voided = Signal()
