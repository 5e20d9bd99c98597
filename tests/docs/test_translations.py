"""The Spanish and Dutch catalogues: every message translated, and the Dutch
pages speaking to the player in one register (the informal "je" throughout,
as Dutch games do), so one page never mixes "je" and "u"."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests.paths import ROOT

LOCALE = ROOT / "easyharp_site" / "locale"
# The formal pronouns as words. A capital U alone is also the undo key
# ("U maakt ongedaan"), so it counts only before a verb of the formal address.
FORMAL = re.compile(r"\b(u|uw|uzelf|Uw|uwe)\b|\bU (kunt|zit|hebt|bent|staat|volgt|speelde|wint)\b")


def entries(language: str) -> list[tuple[str, str]]:
    """The (English, translated) texts of a catalogue, wrapped lines joined."""
    text = (LOCALE / language / "LC_MESSAGES" / "django.po").read_text(encoding="utf-8")
    found = []
    for block in text.split("\n\n"):
        source = block.find("msgid ")
        start = block.find("\nmsgstr")
        if source >= 0 and start >= 0:
            found.append(
                (
                    "".join(re.findall(r'"(.*)"', block[source:start])),
                    "".join(re.findall(r'"(.*)"', block[start:])),
                )
            )
    return found


def messages(language: str) -> list[str]:
    """The translated texts of a catalogue, wrapped lines joined."""
    return [translated for _, translated in entries(language)]


@pytest.mark.parametrize("language", ["es", "nl"])
def test_every_message_is_translated(language: str) -> None:
    msgfmt = shutil.which("msgfmt")
    assert msgfmt is not None, "gettext's msgfmt is needed (apt-get install gettext)"
    result = subprocess.run(
        [
            msgfmt,
            "--check",
            "--statistics",
            "-o",
            "/dev/null",
            LOCALE / language / "LC_MESSAGES" / "django.po",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    # "N translated messages." and nothing fuzzy or untranslated after it.
    assert re.fullmatch(r"\d+ translated messages\.\n", result.stderr), result.stderr


def test_the_dutch_pages_say_je_and_never_u() -> None:
    texts = messages("nl") + [
        (ROOT / "games" / "templates" / "games" / "rules" / "nl.html").read_text(encoding="utf-8")
    ]
    formal = [text[:80] for text in texts if FORMAL.search(text)]
    assert formal == []
    assert any(re.search(r"\bje\b", text) for text in texts)


def test_the_dutch_pages_call_a_deal_a_kaartverdeling() -> None:
    # "Deling" reads as arithmetic's division, and "spel" is already the game
    # played on a deal: a deal is a "kaartverdeling" everywhere.
    rules = (ROOT / "games" / "templates" / "games" / "rules" / "nl.html").read_text(
        encoding="utf-8"
    )
    texts = messages("nl") + [rules]
    assert [text[:80] for text in texts if re.search(r"\bdeling", text, re.I)] == []
    naming_a_deal = [
        (english[:60], dutch[:60])
        for english, dutch in entries("nl")
        if re.search(r"\bdeals?\b", english, re.I) and "kaartverdeling" not in dutch.lower()
    ]
    assert naming_a_deal == []


# Words docs/GLOSSARY.md replaces, per language: each concept has one word.
NOT_IN_THE_GLOSSARY = {
    "nl": {
        # ranked is "officieel"; a board is a "ranglijst"; a foundation a "fundament".
        r"\bgerangschikt": "officieel",
        r"\bmeetel|\btelt mee\b": "officieel",
        r"\bscorebord": "ranglijst",
        r"\bbasisstapel": "fundament",
        # An action of the log is a "handeling", never an "actie".
        r"\bacties?\b": "handeling",
    },
    "es": {
        # The solver is the "solucionador"; ranked is "clasificatorio".
        r"\bresolvedor": "solucionador",
        r"\bclasificad[oa]s?\b": "clasificatorio",
    },
}


@pytest.mark.parametrize("language", ["es", "nl"])
def test_each_concept_has_the_glossarys_one_word(language: str) -> None:
    glossary = (ROOT / "docs" / "GLOSSARY.md").read_text(encoding="utf-8")
    strays = [
        (pattern, text[:80])
        for text in messages(language)
        for pattern in NOT_IN_THE_GLOSSARY[language]
        if re.search(pattern, text, re.I)
    ]
    assert strays == []
    # The words used instead are the glossary's own.
    assert all(word in glossary for word in NOT_IN_THE_GLOSSARY[language].values())


def test_the_dutch_pages_call_a_ranked_game_officieel() -> None:
    ranked = [
        (english[:60], dutch[:60])
        for english, dutch in entries("nl")
        if re.search(r"\branked (attempt|game)\b", english, re.I)
        and not re.search(r"officie(el|le)|officiële", dutch, re.I)
    ]
    assert ranked == []
