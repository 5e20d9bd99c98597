"""The REST API of games, deals and players: thin views that parse, call and serialize.

Each view has its own small Input/Output serializers; the work is done by
`games.services` (writes) and `games.selectors` (reads), and every refusal is a
`ServiceError` or a DRF error that `easyharp_site.errors` turns into
`{"error": {"code", "message", ...}}`.
"""

from __future__ import annotations

from typing import Any

from django.urls import NoReverseMatch, reverse
from django.utils import timezone
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
from games.models import Attempt, Game

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
    # The fair daily contest: the player's one ranked game of the day, or practice.
    ranked = serializers.BooleanField(
        help_text="The player's ranked game of the day; false: practice, on no board."
    )
    assisted = serializers.BooleanField(
        help_text="A hint was asked during the ranked attempt: shown, ranked on no board."
    )
    duration_ms = serializers.IntegerField(
        allow_null=True,
        help_text="Milliseconds the server measured from the attempt's start to the "
        "submission; null for practice.",
    )

    def get_url(self, game: Game) -> str:
        return game_url(self.context["request"], game)


class GameDetailOutput(GameOutput):
    log = serializers.CharField()


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "number", "minimum": 0},
        "description": "Milliseconds since the attempt started, one per action, never "
        "decreasing; the last no later than the server's own measure plus "
        "ATTEMPT_TIMES_ALLOWANCE_MS. Bad times are a 400 `invalid_times` with the "
        "1-based `index` and a `reason_code`.",
        "example": [850, 1400, 2950],
    }
)
class TimesField(serializers.Field):
    """Per-action times: a list, whose entries `games.parsing.times_check` reads."""

    default_error_messages = {"invalid": "Times are a list of milliseconds, one per action."}

    def to_internal_value(self, data: Any) -> list[Any]:
        if isinstance(data, list):
            return data
        self.fail("invalid")


class GameCreateApi(APIView):
    """Submit a game: the server replays the log and stores what it computed.

    With an `Idempotency-Key` header, a retry with the same key, deal and log
    returns the game stored the first time with 200 (the first answer is 201);
    the same key with another deal or log is a 409 `idempotency_key_reused`.

    A game of today's deal by a player whose ranked attempt of today is open
    is their ranked game (`ranked` true) and closes the attempt, won or not;
    every other game is practice. `times` (optional) are the per-action times.
    """

    permission_classes = [IsAuthenticated]
    throttle_scope = "submit"

    class InputSerializer(serializers.Serializer):
        deal = serializers.CharField(max_length=64)
        log = LogField()
        times = TimesField(required=False)

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


# --- The ranked attempt of the day -------------------------------------------------


@extend_schema_serializer(component_name="Attempt")
class AttemptOutput(serializers.Serializer):
    id = serializers.IntegerField()
    date = serializers.DateField(source="daily.date")
    deal = serializers.CharField(source="daily.deal_code")
    started_at = serializers.DateTimeField()
    status = serializers.ChoiceField(choices=Attempt.Status.values)
    assisted = serializers.BooleanField(
        help_text="A hint was asked while the attempt was open: its game is on no board."
    )
    log = serializers.CharField(
        source="current_log",
        allow_blank=True,
        help_text="The game so far, as last saved (once submitted: the ranked game's log).",
    )
    saved_at = serializers.DateTimeField(allow_null=True)
    game = serializers.IntegerField(
        source="ranked_game.pk",
        allow_null=True,
        default=None,
        help_text="The ranked game, once submitted.",
    )
    elapsed_ms = serializers.SerializerMethodField(
        help_text="Milliseconds since the start by the server's clock at this answer "
        "(for a closed attempt: until its submission)."
    )

    def get_elapsed_ms(self, attempt: Attempt) -> int:
        end = attempt.closed_at or timezone.now()
        return max(0, int((end - attempt.started_at).total_seconds() * 1000))


class DailyAttemptApi(APIView):
    """The signed-in player's one ranked attempt at a day's deal.

    `POST` starts it (today only): 201 the first time, then 200 with the same
    attempt, from any device. The server's clock starts then. `GET` reads it
    (404 `no_attempt` before it is started). `PATCH` saves the game so far,
    validated like a submission (a refused log is a 400 `illegal_action` and
    saves nothing). Submitting today's deal to `POST /api/games/` closes it.
    """

    permission_classes = [IsAuthenticated]
    throttle_scope = "submit"

    @extend_schema_serializer(component_name="AttemptSave")
    class SaveInputSerializer(serializers.Serializer):
        log = LogField(help_text="The whole game so far (required), as text or a list of tokens.")

    @extend_schema(operation_id="daily_attempt_read", responses={200: AttemptOutput})
    def get(self, request: Request, date: str) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        attempt = selectors.attempt_get(player=request.user, date=parse_day(date))
        return Response(AttemptOutput(attempt).data)

    @extend_schema(
        operation_id="daily_attempt_start",
        request=None,
        responses={201: AttemptOutput, 200: AttemptOutput},
    )
    def post(self, request: Request, date: str) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        attempt, created = services.attempt_start(player=request.user, date=parse_day(date))
        return Response(
            AttemptOutput(attempt).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )

    @extend_schema(
        operation_id="daily_attempt_save",
        request=SaveInputSerializer,
        responses={200: AttemptOutput},
    )
    def patch(self, request: Request, date: str) -> Response:
        data = self.SaveInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        attempt = services.attempt_save(
            player=request.user, date=parse_day(date), log=data.validated_data["log"]
        )
        return Response(AttemptOutput(attempt).data)


# --- Hints -------------------------------------------------------------------------


class HintApi(APIView):
    """The next action of a win from a position, or that there is none, or that time ran out.

    A hint on today's deal asked by a signed-in player whose ranked attempt is
    open marks that attempt assisted (`assisted` true): its game is stored and
    shown with the mark, and ranked on no board.
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
        assisted = serializers.BooleanField(
            default=False,
            help_text="This hint counted against the player's open ranked attempt of today.",
        )

    @extend_schema(request=InputSerializer, responses={200: OutputSerializer})
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        answer = selectors.game_hint(**data.validated_data)
        output = self.OutputSerializer(answer).data
        if request.user.is_authenticated:
            output["assisted"] = services.attempt_assist(
                player=request.user, deal=data.validated_data["deal"]
            )
        return Response(output)
