"""What the boards announce to the apps above them.

`board_entries_moved` is sent inside the writing transaction, with the
player's row locked, whenever a player's entries of a day were written or
removed (their ranked game, a void, a ban or its lifting, a deleted account),
with the arguments `player_id`, `date` and `replaced`: False when the player
had no entry of that day before (their ranked game, the common case), so
that there is nothing of the day to remove. An app that keeps copies of the
entries (the leagues keep each league's in board order) brings them in step
there, in the same transaction.
"""

from __future__ import annotations

from django.dispatch import Signal

board_entries_moved = Signal()
