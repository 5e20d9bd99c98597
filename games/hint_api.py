"""POST /api/hint/: the next action of a win from a deal and a log (the play page's hint).

The answer's `result` is "move" (with the `action` to play next), "lost" when
the solver has proven that no sequence of actions wins from the position,
"unknown" when its budget (setting HINT_SOLVER_SECONDS) ran out first, or
"won" when the log already wins.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from games import rules
from games.api import LogField
from games.exceptions import ServiceError
from games.solver import Hint, hint


def game_hint(*, deal: str, log: str | Sequence[str]) -> Hint:
    """The solver's hint for the table after `log` in `deal`.

    A deal code that cannot be read is a 400 `invalid_deal`, a log longer than
    GAME_MAX_ACTIONS a 400 `log_too_long`, and a refused log a 400
    `illegal_action` with its index, token and reason, as for a submission.
    """
    try:
        parsed_deal = rules.Deal.from_code(deal)
    except ValueError as error:
        raise ServiceError("invalid_deal", str(error)) from None
    text = log if isinstance(log, str) else " ".join(log)
    actions = len(text.split())
    max_actions: int = settings.GAME_MAX_ACTIONS
    if actions > max_actions:
        raise ServiceError(
            "log_too_long",
            f"A log may hold at most {max_actions} actions; this one has {actions}.",
            max_actions=max_actions,
            actions=actions,
        )
    try:
        return hint(parsed_deal, text, seconds=settings.HINT_SOLVER_SECONDS)
    except (rules.IllegalActionError, rules.InvalidActionError) as error:
        raise ServiceError(
            "illegal_action",
            str(error),
            index=error.index,
            token=error.token,
            reason=error.reason,
            reason_code=error.code,
        ) from None


class HintApi(APIView):
    """The next action of a win from a position, or that there is none, or that time ran out."""

    throttle_scope = "hint"  # each request may cost seconds of solver time

    class InputSerializer(serializers.Serializer):
        deal = serializers.CharField(max_length=64)
        log = LogField(required=False, default="")

    class OutputSerializer(serializers.Serializer):
        result = serializers.ChoiceField(choices=["move", "lost", "unknown", "won"])
        action = serializers.CharField(allow_null=True)
        moves_to_win = serializers.IntegerField(allow_null=True)
        seconds = serializers.FloatField()

    @extend_schema(request=InputSerializer, responses={200: OutputSerializer})
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        answer = game_hint(**data.validated_data)
        return Response(self.OutputSerializer(answer).data)
