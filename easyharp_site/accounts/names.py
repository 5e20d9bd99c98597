"""Which usernames may be taken: safe in a URL path, one script, not a look-alike of another.

A name is compared with the others through its look-alike keys: the Unicode
(UTS #39) confusable skeleton of the name as written and of its case fold,
made by `disarm.skeleton_key` with the identifier policy (`1`/`l`/`I` and
`0`/`O` alike). Two names whose keys meet look alike: `alice`, `ALICE`,
`aIice` (capital i) and an all-Cyrillic `аӏісе` share the key `alice`. The keys
are stored (`PlayerName`, unique), so the check is one indexed lookup and two
sign-ups racing for look-alike names cannot both be stored.
"""

from __future__ import annotations

import disarm
from django.contrib.auth.models import AbstractBaseUser

# Longest stored key (a skeleton can be longer than its name; none of a
# 150-character name in practice comes near this).
KEY_MAX_LENGTH = 255
NAME_MAX_LENGTH = 150


def name_problem(username: str) -> str | None:
    """Why `username` (already NFKC-normalised) cannot be taken, or None if it can."""
    if len(username) > NAME_MAX_LENGTH:
        return f"A username has at most {NAME_MAX_LENGTH} characters (after normalisation)."
    if username.startswith(".") or username.endswith("."):
        # `.` and `..` are path steps: /players/../ is the home page.
        return "A username may not start or end with a dot."
    if disarm.is_mixed_script(username):
        return (
            "A username may not mix scripts (such as Latin and Cyrillic letters), "
            "so that no name can pass for another."
        )
    if any(len(key) > KEY_MAX_LENGTH for key in name_keys(username)):
        return "This username is too long."
    return None


def name_keys(username: str) -> set[str]:
    """The look-alike keys of `username`: names that share a key look alike."""
    return {
        disarm.skeleton_key(username, digit_policy="tr39"),
        disarm.skeleton_key(username.casefold(), digit_policy="tr39"),
    }


def player_keys(player: AbstractBaseUser) -> set[str]:
    return name_keys(player.get_username())
