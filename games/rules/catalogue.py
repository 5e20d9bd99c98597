"""The refusal reasons as an ES module, so the browser's engine reads the same texts.

`games/static/games/reasons.js` is this module's output, written by
`make catalogue`; a test keeps the committed file equal to it.

>>> text = reasons_module()
>>> text.splitlines()[0]
'// Generated from games/rules/errors.py by `make catalogue`: do not edit by hand.'
>>> '"no_foundation_accepts": "no foundation accepts {card}",' in text
True
"""

from __future__ import annotations

import json
from typing import Final

from .errors import REASONS

__all__ = ["reasons_module"]

HEADER: Final = """\
// Generated from games/rules/errors.py by `make catalogue`: do not edit by hand.
/**
 * English template of every refusal, keyed by the engine's stable reason code
 * and filled from the named fields of the error (`params`). The pages
 * translate by code.
 */
"""


def reasons_module() -> str:
    """The text of `reasons.js`: `export const REASONS = {...};`, keys sorted."""
    body = json.dumps(REASONS, sort_keys=True, indent=2)
    return f"{HEADER}export const REASONS = {body};\n"
