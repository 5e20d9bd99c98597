"""The bare endpoint of bench/submit.py: stores a game row with no validation or ranking.

Same authentication, body parsing and row as `POST /api/games/`, minus
everything that makes a submission trustworthy: no replay of the log, no
results computed, no board update, no idempotency check, no live hook. The
difference between the two endpoints' rates is the price of validation and
ranking.
"""

from __future__ import annotations

from django.utils import timezone
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from games.api import GameOutput
from games.models import Game
from ranking.api import GameCreateApi


def code_number(code: str) -> int:
    """The number of a well-formed deal code, read without any check."""
    number = 0
    for letter in code.strip().upper()[-7:]:
        number = number * 26 + ord(letter) - ord("A")
    return number


class BareGameApi(APIView):
    permission_classes = [IsAuthenticated]

    def post(self, request: Request) -> Response:
        data = GameCreateApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        log = data.validated_data["log"]
        tokens = log.split() if isinstance(log, str) else log
        game = Game.objects.create(
            player=request.user,
            deal_number=code_number(data.validated_data["deal"]),
            log=" ".join(tokens),
            score=0,
            moves=len(tokens),
            won=False,
            actions=len(tokens),
            rules_version="EH1",
            daily=None,
            created_at=timezone.now(),
        )
        return Response(GameOutput(game, context={"request": request}).data, status=201)
