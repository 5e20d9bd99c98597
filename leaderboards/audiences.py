"""Audiences: the smaller groups of players a day's board can be narrowed to.

A board narrowed to an audience (a player's friends, a league's members) shows
the same entries as the day's board, ranked among the audience only. The apps
above the leaderboards say who belongs to an audience by registering a
function here, once their app is ready; the boards, the API and the live
sockets ask for it by name without knowing where the players come from.

An audience is named by a kind and an id: `friends` of a viewer's player id,
`league` of a league's id.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

Members = Callable[[int], Collection[int]]

_KINDS: dict[str, Members] = {}


def audience_register(*, kind: str, members: Members) -> None:
    """Make `kind` an audience: `members(id)` gives its player ids (a bounded number)."""
    _KINDS[kind] = members


def audience_known(kind: str) -> bool:
    """Whether an app registered `kind`."""
    return kind in _KINDS


def audience_members(*, kind: str, id: int) -> Collection[int]:
    """The player ids of the audience `kind` `id` (KeyError for an unregistered kind)."""
    return _KINDS[kind](id)
