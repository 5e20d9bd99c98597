"""`{{ ms|clock }}`: a duration in milliseconds as a clock shows it (`4:07`, `1:02:09`).

The same format as `clock()` in `static/games/ui.js`, which the live pages use.
"""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def clock(milliseconds: int | None) -> str:
    """Minutes and seconds (hours too from one hour on); empty for no duration."""
    if milliseconds is None:
        return ""
    seconds = int(milliseconds) // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours}:{minutes:02}:{seconds:02}"
    return f"{minutes}:{seconds:02}"
