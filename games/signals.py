"""What the games app announces, for the apps that build on it (the leaderboards).

All are sent inside the service's transaction, with the player's row locked,
so a receiver's writes commit or roll back with the change itself.
`game_stored` and `game_voided` carry the stored `game`; `player_games_changed`
carries the `player` and the `dates` whose ranked games now count differently.
"""

from __future__ import annotations

from django.dispatch import Signal

# A game was stored (a new submission, not an idempotent retry).
game_stored = Signal()
# A game was voided by a moderator: it no longer counts anywhere.
game_voided = Signal()
# Whether a player's ranked games count changed: a ban (they leave every board),
# its lifting (they come back), or a held game cleared (it takes its place).
player_games_changed = Signal()
