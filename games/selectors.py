"""Reads of deals, games and players."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db.models import QuerySet
from rest_framework import status

from games import rules
from games.exceptions import ServiceError, illegal_action
from games.models import Game
from games.services import deal_parse, log_tokens
from games.solver import Hint, hint


def deal_code(number: int) -> str:
    """The code of deal `number`, e.g. 5 -> `EH1-N-AAAAAAF`."""
    return rules.Deal(number).code


def deal_start(*, code: str) -> dict[str, Any]:
    """`{code, number, table}` of a deal: its starting table as the engine shows it.

    A code that cannot be read is a 404 `invalid_deal` saying what is wrong.
    """
    try:
        deal = rules.Deal.from_code(code)
    except ValueError as error:
        raise ServiceError(
            "invalid_deal", str(error), status_code=status.HTTP_404_NOT_FOUND
        ) from None
    return {"code": deal.code, "number": deal.number, "table": rules.Game(deal).table()}


def game_get(*, game_id: int) -> Game:
    """The game `game_id` (voided ones too: a replay stays public), or a 404 error."""
    game = Game.objects.select_related("player", "daily").filter(pk=game_id).first()
    if game is None:
        raise ServiceError(
            "not_found", f"There is no game {game_id}.", status_code=status.HTTP_404_NOT_FOUND
        )
    return game


def game_replay(*, game: Game) -> dict[str, Any]:
    """`{game, deal, rules_version, frames}`: the table after every action, in one pass.

    Frame 0 is the deal (`index` 0, `token` None); frame i follows action i.
    """
    if game.rules_version != rules.RULES_VERSION:
        # A future engine keeps old rule sets; until then, say why rather than
        # replay a game under rules it was not played by.
        raise ServiceError(
            "rules_version_unsupported",
            f"Game {game.pk} was played under rules {game.rules_version}, "
            f"which this server cannot replay.",
            status_code=status.HTTP_409_CONFLICT,
        )
    played = rules.Game(rules.Deal(game.deal_number))
    frames = [_frame(0, None, played)]
    for index, token in enumerate(game.log.split(), start=1):
        played.play(token)
        frames.append(_frame(index, token, played))
    return {
        "game": game.pk,
        "deal": game.deal_code,
        "rules_version": game.rules_version,
        "frames": frames,
    }


def _frame(index: int, token: str | None, played: rules.Game) -> dict[str, Any]:
    return {
        "index": index,
        "token": token,
        "score": played.score,
        "moves": played.moves,
        "table": played.table(),
    }


def player_get(*, username: str) -> User:
    """The active player named `username`, or a 404 error."""
    player = get_user_model().objects.filter(username=username, is_active=True).first()
    if player is None:
        raise ServiceError(
            "not_found", f"There is no player {username!r}.", status_code=status.HTTP_404_NOT_FOUND
        )
    return player


def player_games(*, player: User, limit: int = 20) -> QuerySet[Game]:
    """The player's most recent games, newest first."""
    return Game.objects.filter(player=player).select_related("player", "daily")[:limit]


def game_hint(*, deal: str, log: str | Sequence[str]) -> Hint:
    """The solver's hint for the table after `log` in `deal` (budget HINT_SOLVER_SECONDS).

    A deal code that cannot be read is a 400 `invalid_deal`, a log longer than
    GAME_MAX_ACTIONS a 400 `log_too_long`, and a refused log a 400
    `illegal_action` with its index, token and reason, as for a submission.
    """
    parsed_deal = deal_parse(deal)
    tokens = log_tokens(log)
    try:
        return hint(parsed_deal, tokens, seconds=settings.HINT_SOLVER_SECONDS)
    except rules.ActionError as error:
        raise illegal_action(error) from None
