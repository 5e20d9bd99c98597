"""The REST API of games, deals and players: thin views that parse, call and serialize.

Each view has its own small Input/Output serializers; the work is done by
`games.services` (writes) and `games.selectors` (reads), and every refusal is a
`ServiceError` or a DRF error that `easyharp_site.errors` turns into
`{"error": {"code", "message", ...}}`.
"""

from __future__ import annotations

from typing import Any

from django.urls import NoReverseMatch, reverse
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from easyharp_site.dates import parse_day, today
from easyharp_site.errors import ServiceError
from games import selectors, services
from games.models import Game

IDEMPOTENCY_KEY_MAX = 255


def game_url(request: Request, game: Game) -> str:
    """The public link of a game: its replay page, or its API resource without pages."""
    try:
        path = reverse("replay", args=[game.pk])
    except NoReverseMatch:
        path = reverse("api-game-detail", args=[game.pk])
    return request.build_absolute_uri(path)


# --- Deals -------------------------------------------------------------------------


class DailyOutput(serializers.Serializer):
    date = serializers.DateField()
    deal = serializers.CharField(source="deal_code")
    number = serializers.IntegerField()
    par = serializers.IntegerField(allow_null=True)
    closes_at = serializers.DateTimeField()


class DailyTodayApi(APIView):
    """Today's deal (UTC): the same for everyone."""

    @extend_schema(operation_id="daily_today", responses={200: DailyOutput})
    def get(self, request: Request) -> Response:
        day = selectors.daily_deal_get(date=today())
        return Response(DailyOutput(day).data)


class DailyDetailApi(APIView):
    """The deal of a past or current day; a future day is 404."""

    @extend_schema(responses={200: DailyOutput})
    def get(self, request: Request, date: str) -> Response:
        day = selectors.daily_deal_get(date=parse_day(date))
        return Response(DailyOutput(day).data)


class DealApi(APIView):
    """A deal by code, with the engine's starting table."""

    @extend_schema_serializer(component_name="DealStart")
    class OutputSerializer(serializers.Serializer):
        code = serializers.CharField()
        number = serializers.IntegerField()
        table = serializers.DictField()

    @extend_schema(responses={200: OutputSerializer})
    def get(self, request: Request, code: str) -> Response:
        return Response(self.OutputSerializer(selectors.deal_start(code=code)).data)


# --- Games -------------------------------------------------------------------------


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "example": "S S 37 WF U"},
            {"type": "array", "items": {"type": "string"}, "example": ["S", "S", "37", "WF"]},
        ]
    }
)
class LogField(serializers.Field):
    """A move log as text (`"S 37 WF"`) or as a list of tokens (`["S", "37", "WF"]`)."""

    default_error_messages = {
        "invalid": "A log is text or a list of text tokens.",
    }

    def to_internal_value(self, data: Any) -> str | list[str]:
        if isinstance(data, str):
            return data
        if isinstance(data, list) and all(isinstance(item, str) for item in data):
            return data
        self.fail("invalid")

    def to_representation(self, value: str) -> str:
        return value


class GameOutput(serializers.Serializer):
    id = serializers.IntegerField()
    player = serializers.CharField(source="player.username")
    deal = serializers.CharField(source="deal_code")
    score = serializers.IntegerField()
    moves = serializers.IntegerField()
    won = serializers.BooleanField()
    actions = serializers.IntegerField()
    rules_version = serializers.CharField()
    daily = serializers.DateField(source="daily.date", allow_null=True, default=None)
    voided = serializers.BooleanField(source="is_voided")
    created_at = serializers.DateTimeField()
    url = serializers.SerializerMethodField()

    def get_url(self, game: Game) -> str:
        return game_url(self.context["request"], game)


class GameDetailOutput(GameOutput):
    log = serializers.CharField()


class GameCreateApi(APIView):
    """Submit a game: the server replays the log and stores what it computed.

    With an `Idempotency-Key` header, a retry with the same key, deal and log
    returns the game stored the first time with 200 (the first answer is 201);
    the same key with another deal or log is a 409 `idempotency_key_reused`.
    """

    permission_classes = [IsAuthenticated]
    throttle_scope = "submit"

    class InputSerializer(serializers.Serializer):
        deal = serializers.CharField(max_length=64)
        log = LogField()

    @extend_schema(
        request=InputSerializer,
        parameters=[
            OpenApiParameter(
                "Idempotency-Key",
                str,
                OpenApiParameter.HEADER,
                description="Any text up to 255 characters, unique per game for this player.",
            )
        ],
        responses={201: GameOutput, 200: GameOutput},
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        key = request.headers.get("Idempotency-Key")
        if key is not None and not 0 < len(key) <= IDEMPOTENCY_KEY_MAX:
            raise ServiceError(
                "invalid_idempotency_key",
                f"An Idempotency-Key has 1 to {IDEMPOTENCY_KEY_MAX} characters.",
            )
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        game, created = services.game_submit(
            player=request.user, idempotency_key=key, **data.validated_data
        )
        output = GameOutput(game, context={"request": request})
        return Response(output.data, status=status.HTTP_201_CREATED if created else 200)


class GameDetailApi(APIView):
    """A stored game with its log (public by link)."""

    @extend_schema(responses={200: GameDetailOutput})
    def get(self, request: Request, game_id: int) -> Response:
        game = selectors.game_get(game_id=game_id)
        return Response(GameDetailOutput(game, context={"request": request}).data)


class GameReplayApi(APIView):
    """The table after every action of a game; frame 0 is the deal."""

    # A 20,000-action replay costs seconds of CPU and ~15 MB: limited per client.
    throttle_scope = "replay"

    @extend_schema_serializer(component_name="Replay")
    class OutputSerializer(serializers.Serializer):
        class FrameSerializer(serializers.Serializer):
            index = serializers.IntegerField()
            token = serializers.CharField(allow_null=True)
            score = serializers.IntegerField()
            moves = serializers.IntegerField()
            table = serializers.DictField()

        game = serializers.IntegerField()
        deal = serializers.CharField()
        rules_version = serializers.CharField()
        frames = FrameSerializer(many=True)

    @extend_schema(responses={200: OutputSerializer})
    def get(self, request: Request, game_id: int) -> Response:
        game = selectors.game_get(game_id=game_id)
        # The frames are plain JSON already; running thousands of them through
        # a serializer would cost more than the replay itself.
        response = Response(selectors.game_replay(game=game))
        # A stored game never changes its log, so proxies and browsers may keep
        # the frames (a 20,000-action replay costs about a second to build).
        response["Cache-Control"] = "public, max-age=86400"
        return response


# --- Hints -------------------------------------------------------------------------


class HintApi(APIView):
    """The next action of a win from a position, or that there is none, or that the work ran out.

    The solver's work is fixed, so the same position always gets the same
    answer; `cut_short` is true when the time cap stopped it first.
    """

    throttle_scope = "hint"  # each request may cost seconds of solver time

    class InputSerializer(serializers.Serializer):
        deal = serializers.CharField(max_length=64)
        log = LogField(required=False, default="")

    class OutputSerializer(serializers.Serializer):
        result = serializers.ChoiceField(choices=["move", "lost", "unknown", "won"])
        action = serializers.CharField(allow_null=True)
        moves_to_win = serializers.IntegerField(allow_null=True)
        seconds = serializers.FloatField()
        cut_short = serializers.BooleanField()

    @extend_schema(request=InputSerializer, responses={200: OutputSerializer})
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        answer = selectors.game_hint(**data.validated_data)
        return Response(self.OutputSerializer(answer).data)
