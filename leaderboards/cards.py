"""Share cards: the words of a shared result, and the picture a shared link unfurls with.

Both are spoiler-free by construction: they are made from a game's facts
(`selectors.game_share`: date, day number, won, score, moves, par, assisted, rank,
streak and its course, four foundation counts, time, undos) and never see its log.
The course is drawn as a grid of squares, a row per quarter of the game and a square
per 13 cards put away in that quarter, each row saying its count in words, so a share
shows how the game went (how much went up, and when) and nothing of how to play it.

Pictures are drawn in DejaVu Sans (Debian's `fonts-dejavu-core`, which the
image installs), so "Puntuación" keeps its accent. Where that file is missing
they fall back to Pillow's own font, which has no accented letters: those are
then drawn without their accents rather than as empty boxes.
"""

from __future__ import annotations

import functools
import io
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.utils.translation import gettext, gettext_noop, ngettext
from django.utils.translation import gettext as _
from PIL import Image, ImageDraw, ImageFont

from games.templatetags.clock import clock

# Open Graph's recommended size; Twitter's large summary card takes it too.
CARD_SIZE = (1200, 630)
# Bumped whenever the drawing changes, so cached pictures are drawn again.
CARD_VERSION = 5
_BACKGROUND = (18, 82, 52)
_INK = (250, 248, 240)
_ACCENT = (242, 201, 76)
_EMPTY = (44, 110, 78)

# Debian's fonts-dejavu-core (the Dockerfile installs it).
FONT_FILE = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")

# A square of the grid stands for 13 cards put away (a foundation's worth).
GRID_SQUARES = 8
CARDS_PER_SQUARE = 13
FULL, PART, EMPTY = "🟩", "🟨", "⬛"
# How pages draw each square (CSS classes), where an emoji font may be missing.
SQUARE_KINDS = {FULL: "full", PART: "part", EMPTY: "empty"}


def grid_squares(count: int) -> list[str]:
    """One row of the grid: `count` cards put away as 8 squares, each full (13 cards),
    part-filled or empty."""
    row = []
    for square in range(GRID_SQUARES):
        up = count - square * CARDS_PER_SQUARE
        row.append(FULL if up >= CARDS_PER_SQUARE else PART if up > 0 else EMPTY)
    return row


def put_away(course: Sequence[int]) -> list[int]:
    """The cards put away in each quarter of a game, from its course (the cards on the
    foundations after each quarter); a quarter that took more back than it put away
    counts 0.

    >>> put_away([14, 40, 40, 104])
    [14, 26, 0, 64]
    """
    return [max(0, after - before) for before, after in zip([0, *course], course, strict=False)]


def share_grid(course: Sequence[int]) -> list[str]:
    """The grid of a game's course: a row of squares per quarter, for the cards put
    away in that quarter.

    >>> share_grid([14, 104])
    ['🟩🟨⬛⬛⬛⬛⬛⬛', '🟩🟩🟩🟩🟩🟩🟨⬛']
    """
    return ["".join(grid_squares(count)) for count in put_away(course)]


# The quarters of a game, as a grid row names them.
QUARTERS = (
    gettext_noop("first quarter"),
    gettext_noop("second quarter"),
    gettext_noop("third quarter"),
    gettext_noop("last quarter"),
)


def grid_rows(course: Sequence[int]) -> list[tuple[list[str], str]]:
    """Each row of the grid: its squares, and its quarter and count in words, so that
    the grid needs no legend."""
    return [
        (
            grid_squares(count),
            ngettext(
                "%(quarter)s: %(count)s card put away",
                "%(quarter)s: %(count)s cards put away",
                count,
            )
            % {"quarter": gettext(quarter), "count": count},
        )
        for quarter, count in zip(QUARTERS, put_away(course), strict=True)
    ]


def share_rows(course: Sequence[int]) -> list[str]:
    """The grid's rows as the text shows them: each row's squares, then its words."""
    return [f"{''.join(squares)} {words}" for squares, words in grid_rows(course)]


def share_title(facts: dict[str, Any]) -> str:
    """The first line: the day's number and date (or the deal, for practice)."""
    if facts["date"] is None:
        return _("Easy Harp, deal %(deal)s") % {"deal": facts["deal"]}
    return _("Easy Harp Daily #%(number)s · %(date)s") % {
        "number": facts["day_number"],
        "date": facts["date"].isoformat(),
    }


def share_facts_line(facts: dict[str, Any]) -> str:
    """The game's time (a ranked game's), its undos and, for a ranked game played
    without a hint, "no hint" (an assisted one says so on a line of its own)."""
    parts = []
    if facts["time_ms"] is not None:
        parts.append(_("Time %(time)s") % {"time": clock(facts["time_ms"])})
    parts.append(
        ngettext("%(count)s undo", "%(count)s undos", facts["undos"]) % {"count": facts["undos"]}
    )
    if facts["ranked"] and not facts["assisted"]:
        parts.append(_("no hint"))
    return " · ".join(parts)


def share_lines(facts: dict[str, Any], *, details: bool = True) -> list[str]:
    """The lines after the grid: the result against par, its time, undos and hints
    (unless not `details`), the score and rank, whether it was assisted (then it has
    no rank), the streak."""
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
    lines = [result, share_facts_line(facts), score] if details else [result, score]
    if facts["assisted"]:
        lines.append(_("Assisted: a hint was used"))
    if facts["streak"]:
        lines.append(
            ngettext("Streak: %(days)s day", "Streak: %(days)s days", facts["streak"])
            % {"days": facts["streak"]}
        )
    return lines


def share_text(facts: dict[str, Any], url: str) -> str:
    """The whole text to share: title, the grid's rows (each saying what it counts),
    lines and the link."""
    return "\n".join([share_title(facts), *share_rows(facts["course"]), *share_lines(facts), url])


@functools.cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    if FONT_FILE.is_file():
        return ImageFont.truetype(str(FONT_FILE), size)
    return ImageFont.load_default(size=size)


def _drawable(text: str) -> str:
    """`text` as the font can draw it: whole in DejaVu Sans; with Pillow's own font,
    the accents of its letters dropped ("Puntuación" → "Puntuacion"), which it would
    draw as empty boxes."""
    if FONT_FILE.is_file():
        return text
    return "".join(
        char for char in unicodedata.normalize("NFKD", text) if not unicodedata.combining(char)
    )


def _draw_grid(draw: ImageDraw.ImageDraw, course: Sequence[int]) -> None:
    """The grid of `share_grid`, drawn as squares in the top right corner, each row's
    count of cards put away on its left."""
    size, gap = 30, 8
    colours = {FULL: (106, 170, 100), PART: _ACCENT, EMPTY: _EMPTY}
    left = CARD_SIZE[0] - 72 - GRID_SQUARES * (size + gap) + gap
    for row, count in enumerate(put_away(course)):
        top = 48 + row * (size + gap)
        draw.text((left - 16, top + size // 2), str(count), font=_font(26), fill=_INK, anchor="rm")
        for column, square in enumerate(grid_squares(count)):
            x = left + column * (size + gap)
            draw.rounded_rectangle((x, top, x + size, top + size), radius=5, fill=colours[square])


def card_png(
    title: str, lines: Sequence[str], footer: str = "", course: Sequence[int] | None = None
) -> bytes:
    """A 1200×630 PNG: a title, a few lines of text, a footer and, for a game, the
    grid of its course (`share_grid`)."""
    title, footer = _drawable(title), _drawable(footer)
    lines = [_drawable(line) for line in lines]
    image = Image.new("RGB", CARD_SIZE, _BACKGROUND)
    draw = ImageDraw.Draw(image)
    big, body, small = _font(60), _font(44), _font(32)
    # Two cards, fanned, for a logo (the default font has no suit signs).
    draw.rounded_rectangle((72, 56, 122, 126), radius=8, fill=_INK, outline=_ACCENT, width=3)
    draw.rounded_rectangle((102, 48, 152, 118), radius=8, fill=_INK, outline=_ACCENT, width=3)
    if course:
        _draw_grid(draw, course[:4])
    draw.text((72, 200), title, font=big, fill=_INK)
    y = 300
    for line in lines[:4]:
        draw.text((72, y), line, font=body, fill=_INK)
        y += 62
    if footer:
        draw.text((72, CARD_SIZE[1] - 72), footer, font=small, fill=_ACCENT)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()
