"""The two errors of the engine and the wording of every refusal.

Every refusal has a stable snake_case code. `REASONS` maps each code to its
English text template; clients that show reasons in another language translate
by code and fill in the same named fields (`.params` on the error).

The fields are machine-readable, as the log writes them: `source` is a column
number (`"5"`), `"W"` for the waste or `"F3"` for a foundation; `card` and
`target` are cards (`"TH"`); `foundation` is a foundation number (`"3"`);
`suit` is a suit's English name. Only the English sentence spells places out.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = [
    "DEAL_REASONS",
    "REASONS",
    "IllegalActionError",
    "InvalidActionError",
    "ActionError",
    "InvalidDealError",
]


def gettext_noop(message: str) -> str:
    """Marks a text for translation and returns it unchanged.

    The engine imports nothing of Django; the name is the one Django's
    `makemessages` looks for, so the reasons below are in the site's catalogues
    and the pages show them in the player's language (`games.web`).
    """
    return message


REASONS: Final[dict[str, str]] = {
    "empty_stock_and_waste": gettext_noop("the stock and the waste are both empty"),
    "empty_source": gettext_noop("there is no card to move: {source} is empty"),
    "one_card_at_a_time": gettext_noop(
        "only the top card moves between columns; a run moves as a block only when it "
        "starts with a king and goes to an empty column"
    ),
    "king_only": gettext_noop(
        "an empty column accepts only a king, or a run that starts with a king"
    ),
    "run_only_to_empty": gettext_noop(
        "{card} heads a run, and a king-headed run moves only to an empty column"
    ),
    "column_refuses": gettext_noop(
        "{card} does not go on {target}: a card goes on the next higher rank of the other colour"
    ),
    "foundation_refuses": gettext_noop(
        "F{foundation} does not accept {card}: it takes the {suit} from the ace up, one at a time"
    ),
    "no_foundation_accepts": gettext_noop("no foundation accepts {card}"),
    "foundation_to_foundation": gettext_noop("no card moves from one foundation to another"),
    "waste_is_not_a_destination": gettext_noop("nothing can be put on the waste"),
    "same_column": gettext_noop("a card cannot move to the column it is already in"),
    "nothing_to_undo": gettext_noop(
        "there is nothing left to undo (undo takes back at most the last 100 actions)"
    ),
    "game_over": gettext_noop("the game is won; no action is accepted after that"),
    "unreadable_action": gettext_noop(
        "this is not an action: write S, U or a move such as 37, W3, WF, 3F2 or F27"
    ),
}


# Why a text is not a deal code, by code. The fields are filled in as written:
# `text` and `character` quoted as Python would (`'EH2-N-A'`), numbers with
# thousands separators.
DEAL_REASONS: Final[dict[str, str]] = {
    "deal_code_not_text": gettext_noop("a deal code is text such as EH1-N-AAAAAAB, not {text}"),
    "deal_code_letter": gettext_noop(
        "a deal code uses only the letters A to Z, not {character} in {text}"
    ),
    "deal_code_prefix": gettext_noop(
        '{text} does not start with "{prefix}", as every deal code does'
    ),
    "deal_code_variant": gettext_noop(
        'unknown deal variant {variant} in {text}: EH1 codes use "N"'
    ),
    "deal_code_length": gettext_noop(
        'a deal code has {letters} letters after "{prefix}", {text} has {count}'
    ),
    "deal_code_range": gettext_noop(
        "deal code {deal} stands for deal {number}; deals are numbered 1 to {last}"
    ),
    "deal_number_range": gettext_noop("a deal number is 1 to {last}, not {number}"),
}


class InvalidDealError(ValueError):
    """Text that is not a deal code, or a number that is not a deal's: `code` is a key of
    `DEAL_REASONS`, `params` its fields, and the message the English sentence.

    >>> error = InvalidDealError("deal_code_variant", variant="'X'", text="'EH1-X-AAAAAAB'")
    >>> print(error)
    unknown deal variant 'X' in 'EH1-X-AAAAAAB': EH1 codes use "N"
    """

    def __init__(self, code: str, **params: str) -> None:
        self.code = code
        self.params = params
        super().__init__(DEAL_REASONS[code].format(**params))


def place_in_words(place: str) -> str:
    """A place as the log writes it (`"5"`, `"W"`, `"F3"`) as the English reason says it."""
    if place.isdigit():
        return f"column {place}"
    return "the waste" if place == "W" else place


def _in_words(params: dict[str, str]) -> dict[str, str]:
    if "source" not in params:
        return params
    return {**params, "source": place_in_words(params["source"])}


# The longest part of a refused token that a message or an answer repeats.
TOKEN_SHOWN_MAX: Final = 40


class ActionError(ValueError):
    """Common base: an action of a log that was not accepted.

    `index` is the 1-based position of the action in the log (None for a single
    action played on its own), `token` the text as written, `code` a key of
    `REASONS`, `params` the fields its template uses and `reason` the English
    sentence for a player.
    """

    def __init__(
        self,
        code: str,
        token: str,
        index: int | None = None,
        params: dict[str, str] | None = None,
    ) -> None:
        self.code = code
        self.token = token
        self.index = index
        self.params: dict[str, str] = dict(params or {})
        self.reason = REASONS[code].format(**_in_words(self.params))
        super().__init__(self.message)

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as its fields: hints are searched in another process (games/work.py).
        return (_action_error, (type(self), self.code, self.token, self.index, self.params))

    @property
    def token_shown(self) -> str:
        """The token as written, cut to its first `TOKEN_SHOWN_MAX` characters and `…`.

        No action is longer than a few characters, and an answer must not
        grow with what it refuses (a megabyte "token" echoed back, twice).

        >>> InvalidActionError("Z" * 100).token_shown == "Z" * TOKEN_SHOWN_MAX + "…"
        True
        """
        if len(self.token) <= TOKEN_SHOWN_MAX:
            return self.token
        return self.token[:TOKEN_SHOWN_MAX] + "…"

    @property
    def message(self) -> str:
        """`action 57 "37": <reason>`, or `"37": <reason>` without an index (the token shown)."""
        token = self.token_shown
        where = f'"{token}"' if self.index is None else f'action {self.index} "{token}"'
        return f"{where}: {self.reason}"

    def __str__(self) -> str:
        return self.message

    def as_dict(self) -> dict[str, object]:
        """The JSON-ready form used by the command line."""
        return {
            "index": self.index,
            "token": self.token,
            "reason": self.reason,
            "code": self.code,
            "params": self.params,
        }


class IllegalActionError(ActionError):
    """A readable action that the rules refuse (the table is left unchanged)."""


class InvalidActionError(ActionError):
    """Text that is not an action at all (code `unreadable_action`)."""

    def __init__(self, token: str, index: int | None = None) -> None:
        super().__init__("unreadable_action", token, index)


def _action_error(
    kind: type[ActionError], code: str, token: str, index: int | None, params: dict[str, str]
) -> ActionError:
    """An `ActionError` of class `kind` rebuilt from its fields (unpickling).

    >>> import pickle
    >>> pickle.loads(pickle.dumps(InvalidActionError("Z9", 3))).message
    'action 3 "Z9": this is not an action: write S, U or a move such as 37, W3, WF, 3F2 or F27'
    """
    error = kind.__new__(kind)
    ActionError.__init__(error, code, token, index, params)
    return error
