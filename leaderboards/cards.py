"""Share cards: the words of a shared result, and the picture a shared link unfurls with.

Both are spoiler-free by construction: they are made from a game's facts
(`selectors.game_share`: date, won, score, moves, par, assisted, rank, streak) and
never see its log. Pictures are drawn with Pillow's own font, so no font file
has to be installed; that font has no accented letters, so they are drawn
without their accents.
"""

from __future__ import annotations

import io
import unicodedata
from collections.abc import Sequence
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from PIL import Image, ImageDraw, ImageFont

# Open Graph's recommended size; Twitter's large summary card takes it too.
CARD_SIZE = (1200, 630)
# Bumped whenever the drawing changes, so cached pictures are drawn again.
CARD_VERSION = 2
_BACKGROUND = (18, 82, 52)
_INK = (250, 248, 240)
_ACCENT = (242, 201, 76)


def share_title(facts: dict[str, Any]) -> str:
    """The first line: the day (or the deal, for practice)."""
    if facts["date"] is None:
        return _("Easy Harp, deal %(deal)s") % {"deal": facts["deal"]}
    return _("Easy Harp Daily %(date)s") % {"date": facts["date"].isoformat()}


def share_lines(facts: dict[str, Any]) -> list[str]:
    """The lines after the title: the result against par, the score and rank, whether
    it was assisted (then it has no rank), the streak."""
    moves, par = facts["moves"], facts["par"]
    if facts["won"] and par is not None:
        result = _("Won in %(moves)s moves (par %(par)s, %(diff)s)") % {
            "moves": moves,
            "par": par,
            "diff": f"{moves - par:+d}",
        }
    elif facts["won"]:
        result = _("Won in %(moves)s moves") % {"moves": moves}
    else:
        result = _("Not won: %(moves)s moves") % {"moves": moves}
    score = _("Score %(score)s") % {"score": facts["score"]}
    if facts["rank"] is not None:
        score += " · " + _("rank %(rank)s of %(total)s") % {
            "rank": facts["rank"],
            "total": facts["total"],
        }
    lines = [result, score]
    if facts["assisted"]:
        lines.append(_("Assisted: a hint was used"))
    if facts["streak"]:
        lines.append(
            ngettext("Streak: %(days)s day", "Streak: %(days)s days", facts["streak"])
            % {"days": facts["streak"]}
        )
    return lines


def share_text(facts: dict[str, Any], url: str) -> str:
    """The whole text to share: title, lines and the link."""
    return "\n".join([share_title(facts), *share_lines(facts), url])


def _drawable(text: str) -> str:
    """`text` with the accents of its letters dropped ("Puntuación" → "Puntuacion"), which
    Pillow's own font would draw as empty boxes."""
    return "".join(
        char for char in unicodedata.normalize("NFKD", text) if not unicodedata.combining(char)
    )


def card_png(title: str, lines: Sequence[str], footer: str = "") -> bytes:
    """A 1200×630 PNG: a title, a few lines of text and a footer."""
    title, footer = _drawable(title), _drawable(footer)
    lines = [_drawable(line) for line in lines]
    image = Image.new("RGB", CARD_SIZE, _BACKGROUND)
    draw = ImageDraw.Draw(image)
    big = ImageFont.load_default(size=64)
    body = ImageFont.load_default(size=44)
    small = ImageFont.load_default(size=32)
    # Two cards, fanned, for a logo (the default font has no suit signs).
    draw.rounded_rectangle((72, 56, 122, 126), radius=8, fill=_INK, outline=_ACCENT, width=3)
    draw.rounded_rectangle((102, 48, 152, 118), radius=8, fill=_INK, outline=_ACCENT, width=3)
    draw.text((72, 150), title, font=big, fill=_INK)
    y = 270
    for line in lines[:5]:
        draw.text((72, y), line, font=body, fill=_INK)
        y += 66
    if footer:
        draw.text((72, CARD_SIZE[1] - 72), footer, font=small, fill=_ACCENT)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()
