"""What accounts announces, for the apps that build on it (games, leaderboards).

Both are sent inside the deletion's transaction, with the player's row
locked, so a receiver's writes commit or roll back with the deletion itself.
Receivers get the player (a `User`) as the keyword argument `player`.
"""

from __future__ import annotations

from django.dispatch import Signal

# A player is about to be deleted: the account is still as it was.
player_deleting = Signal()
# A player was deleted: the account is anonymised and counts as deleted
# (the account is deactivated); their games stay, under the anonymous name.
player_deleted = Signal()
