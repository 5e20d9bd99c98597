"""POST /api/hint/: the next action of a win from a deal and a log (the play page's hint).

The answer's `result` is "move" (with the `action` to play next), "lost" when
the solver has proven that no sequence of actions wins from the position,
"unknown" when its budget (setting HINT_SOLVER_SECONDS) ran out first, or
"won" when the log already wins.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from games.api import LogField
from games.selectors import game_hint


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
