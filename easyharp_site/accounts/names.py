"""Which usernames may be taken: safe in a URL path, one script, visible, not a look-alike
of another.

The characters a name may hold (after NFKC) are a profile, not a list of
refused ones: letters of a few scripts that write names with letters alone
(`SCRIPTS`), ASCII digits, and `_ - . @ +`. Modifier letters (`ˍ`, `ʹ`, `ᵃ`),
combining marks, other digits and every other symbol are refused, and a Latin
letter is one only when Unicode names it after a base letter ("LATIN SMALL
LETTER H WITH STROKE"): small capitals, turned, script and IPA letters are not.
Characters that show nothing are refused with a message of their own
(`invisible_char`): the Hangul fillers are letters to Unicode, and a name of
them would look blank and have an empty look-alike key.

A name is compared with the others through its look-alike keys: the Unicode
(UTS #39) confusable skeleton of the name as written and of its case fold,
made by `disarm.skeleton_key` with the identifier policy (`1`/`l`/`I` and
`0`/`O` alike), and of its *fold*, where every letter is its base letter
(`ħ`, `ạ`, `ё` are `h`, `a`, `е`). Two names whose keys meet look alike: `alice`, `ALICE`,
`aIice` (capital i) and an all-Cyrillic `аӏісе` share the key `alice`. The keys
are stored (`PlayerName`, unique), so the check is one indexed lookup and two
sign-ups racing for look-alike names cannot both be stored.
"""

from __future__ import annotations

import re
import unicodedata

import disarm
from disarm import Script
from django.contrib.auth.models import AbstractBaseUser
from django.utils.translation import gettext_noop

from easyharp_site.errors import ServiceError

# Longest stored key (a skeleton can be longer than its name; none of a
# 150-character name in practice comes near this).
KEY_MAX_LENGTH = 255
NAME_MAX_LENGTH = 150
# The scripts whose letters a name may hold, one script a name (Japanese and
# Korean names mix theirs with Han, as `disarm.is_mixed_script` allows).
SCRIPTS = frozenset(
    {
        Script.LATIN,
        Script.GREEK,
        Script.CYRILLIC,
        Script.ARMENIAN,
        Script.GEORGIAN,
        Script.HEBREW,
        Script.ARABIC,
        Script.HAN,
        Script.HIRAGANA,
        Script.KATAKANA,
        Script.HANGUL,
    }
)
# Besides letters and ASCII digits. Each is its own NFKC form's only source in
# the profile, so no other character can pass for one.
SIGNS = frozenset("_-.@+")
# Japanese names need two modifier letters: the prolonged sound mark and the repeat mark.
JAPANESE_MARKS = frozenset("\u30fc\u3005")
LETTERS = frozenset({"Lu", "Ll", "Lt", "Lo"})
# A Latin letter named after its base letter(s), with or without marks.
LATIN_LETTER = re.compile(
    r"LATIN (?:SMALL|CAPITAL) LETTER (?:DOTLESS )?([A-Z]{1,2}|SHARP S|ETH|THORN)( WITH .+)?"
)


# Characters that show nothing, or a blank, though Unicode does not class them as
# format characters or spaces: the Hangul fillers (letters), the braille blank,
# the combining grapheme joiner and the Khmer inherent vowels.
BLANKS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f\u17b4\u17b5")
# Format characters (zero-width space and joiners, direction marks, the word
# joiner...), controls, unassigned and private-use code points, and separators.
INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc", "Cn", "Co", "Cs", "Zs", "Zl", "Zp"})


def invisible_char(text: str, *, spaces: bool = False) -> str | None:
    """The first character of `text` that shows nothing (or a blank), named for a
    message ("U+3164 HANGUL FILLER"), or None. `spaces`: a plain space is allowed."""
    for char in text:
        if spaces and char == " ":
            continue
        code = ord(char)
        if (
            char in BLANKS
            or unicodedata.category(char) in INVISIBLE_CATEGORIES
            or 0xFE00 <= code <= 0xFE0F  # variation selectors
            or 0xE0100 <= code <= 0xE01EF
        ):
            return f"U+{code:04X} {unicodedata.name(char, 'unnamed')}"
    return None


def name_problem(username: str) -> ServiceError | None:
    """Why `username` (already NFKC-normalised) cannot be taken (an `invalid_username`
    error), or None if it can."""
    problem = _name_problem(username)
    if problem is None:
        return None
    template, words = problem
    return ServiceError("invalid_username", template, words=words)


def _name_problem(username: str) -> tuple[str, dict[str, str] | None] | None:
    invisible = invisible_char(username)
    if invisible is not None:
        return (
            gettext_noop("A username may not hold characters that show nothing: {char} is one."),
            {"char": invisible},
        )
    problem = _shape_problem(username)
    if problem is not None:
        return problem, None
    if "" in name_keys(username):
        return gettext_noop("A username must show at least one letter or digit."), None
    return None


def _shape_problem(username: str) -> str | None:
    if len(username) > NAME_MAX_LENGTH:
        return f"A username has at most {NAME_MAX_LENGTH} characters (after normalisation)."
    if username.startswith(".") or username.endswith("."):
        # `.` and `..` are path steps: /players/../ is the home page.
        return "A username may not start or end with a dot."
    stray = next((char for char in username if not _allowed(char)), None)
    if stray is not None:
        return (
            "A username holds letters, digits and _ - . @ + only: "
            f"{stray!r} (U+{ord(stray):04X} {unicodedata.name(stray, 'unnamed')}) is none of them."
        )
    if disarm.is_mixed_script(username):
        return (
            "A username may not mix scripts (such as Latin and Cyrillic letters), "
            "so that no name can pass for another."
        )
    if any(len(key) > KEY_MAX_LENGTH for key in name_keys(username)):
        return "This username is too long."
    return None


def _allowed(char: str) -> bool:
    if char in SIGNS or "0" <= char <= "9" or char in JAPANESE_MARKS:
        return True
    if unicodedata.category(char) not in LETTERS:
        return False
    scripts = disarm.detect_scripts(char)
    if not scripts or not SCRIPTS.issuperset(scripts):
        return False
    return (
        Script.LATIN not in scripts
        or LATIN_LETTER.fullmatch(unicodedata.name(char, "")) is not None
    )


def name_fold(username: str) -> str:
    """`username` case-folded, with every letter written as its base letter, marks dropped."""
    folded = []
    for char in username:
        latin = LATIN_LETTER.fullmatch(unicodedata.name(char, ""))
        if latin is not None and latin[2] is not None and len(latin[1]) <= 2:
            folded.append(latin[1])
            continue
        folded.extend(
            mark for mark in unicodedata.normalize("NFD", char) if not unicodedata.combining(mark)
        )
    return "".join(folded).casefold()


def name_keys(username: str) -> set[str]:
    """The look-alike keys of `username`: names that share a key look alike."""
    return {
        disarm.skeleton_key(username, digit_policy="tr39"),
        disarm.skeleton_key(username.casefold(), digit_policy="tr39"),
        disarm.skeleton_key(name_fold(username), digit_policy="tr39"),
    }


def player_keys(player: AbstractBaseUser) -> set[str]:
    return name_keys(player.get_username())
