"""The REST API of games, deals and players: thin views that parse, call and serialize.

Each view has its own small Input/Output serializers; the work is done by
`games.services` (writes) and `games.selectors` (reads), and every refusal is a
`ServiceError` or a DRF error that `games.exceptions` turns into
`{"error": {"code", "message", ...}}`.
"""

from __future__ import annotations

import datetime
from typing import Any

from django.contrib.auth import login, logout
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from games import selectors, services
from games.exceptions import ServiceError
from games.models import DailyDeal, Game
from leaderboards.selectors import player_board_results

IDEMPOTENCY_KEY_MAX = 255


def parse_day(text: str) -> datetime.date:
    """A `YYYY-MM-DD` date from a URL, or a 404 error."""
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise ServiceError(
            "not_found", f"{text!r} is not a date (YYYY-MM-DD).", status_code=404
        ) from None


def game_url(request: Request, game: Game) -> str:
    """The public link of a game: its replay page, or its API resource without pages."""
    try:
        path = reverse("replay", args=[game.pk])
    except NoReverseMatch:
        path = reverse("api-game-detail", args=[game.pk])
    return request.build_absolute_uri(path)


# --- Accounts ----------------------------------------------------------------------


class CredentialsInput(serializers.Serializer):
    username = serializers.CharField(max_length=150, validators=[UnicodeUsernameValidator()])
    password = serializers.CharField(max_length=128, trim_whitespace=False)


class RegisterApi(APIView):
    """Sign up: create a player and return their API token."""

    throttle_scope = "signup"

    @extend_schema_serializer(component_name="Registered")
    class OutputSerializer(serializers.Serializer):
        username = serializers.CharField()
        token = serializers.CharField()

    @extend_schema(request=CredentialsInput, responses={201: OutputSerializer})
    def post(self, request: Request) -> Response:
        data = CredentialsInput(data=request.data)
        data.is_valid(raise_exception=True)
        player, token = services.player_register(**data.validated_data)
        output = self.OutputSerializer({"username": player.get_username(), "token": token})
        return Response(output.data, status=status.HTTP_201_CREATED)


class TokenApi(APIView):
    """Exchange a username and password for the player's API token."""

    throttle_scope = "auth"

    @extend_schema_serializer(component_name="TokenOutput")
    class OutputSerializer(serializers.Serializer):
        token = serializers.CharField()

    @extend_schema(request=CredentialsInput, responses={200: OutputSerializer})
    def post(self, request: Request) -> Response:
        data = CredentialsInput(data=request.data)
        data.is_valid(raise_exception=True)
        token = services.player_token_get_or_create(**data.validated_data)
        return Response(self.OutputSerializer({"token": token}).data)


class LoginApi(APIView):
    """Log in with a session cookie (for the browser); CSRF-protected like every session write."""

    throttle_scope = "auth"
    authentication_classes: list[type] = []

    @extend_schema_serializer(component_name="LoggedIn")
    class OutputSerializer(serializers.Serializer):
        username = serializers.CharField()

    @extend_schema(request=CredentialsInput, responses={200: OutputSerializer})
    def post(self, request: Request) -> Response:
        # Nobody is signed in yet, so DRF would skip the CSRF check; a forged
        # login would sign a victim's browser into the attacker's account.
        SessionAuthentication().enforce_csrf(request)
        data = CredentialsInput(data=request.data)
        data.is_valid(raise_exception=True)
        player = services.player_authenticate(**data.validated_data)
        login(request._request, player)
        return Response(self.OutputSerializer({"username": player.get_username()}).data)


class LogoutApi(APIView):
    """End the browser session."""

    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request) -> Response:
        logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- Deals -------------------------------------------------------------------------


class DailyOutput(serializers.Serializer):
    date = serializers.DateField()
    deal = serializers.SerializerMethodField()
    number = serializers.IntegerField()
    par = serializers.IntegerField(allow_null=True)
    closes_at = serializers.DateTimeField()

    def get_deal(self, day: DailyDeal) -> str:
        return selectors.deal_code(day.number)


class DailyTodayApi(APIView):
    """Today's deal (UTC): the same for everyone."""

    @extend_schema(operation_id="daily_today", responses={200: DailyOutput})
    def get(self, request: Request) -> Response:
        day = services.daily_deal_get_or_create(date=timezone.now().date())
        return Response(DailyOutput(day).data)


class DailyDetailApi(APIView):
    """The deal of a past or current day; a future day is 404."""

    @extend_schema(responses={200: DailyOutput})
    def get(self, request: Request, date: str) -> Response:
        day = services.daily_deal_get_or_create(date=parse_day(date))
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


# --- Players -----------------------------------------------------------------------


class PlayerApi(APIView):
    """A player's daily results (last 30 days) and recent games (last 20)."""

    @extend_schema(
        responses={
            200: inline_serializer(
                "PlayerOutput",
                {
                    "username": serializers.CharField(),
                    "joined": serializers.DateTimeField(),
                    "daily": serializers.ListField(child=serializers.DictField()),
                    "games": GameOutput(many=True),
                },
            )
        }
    )
    def get(self, request: Request, username: str) -> Response:
        player = selectors.player_get(username=username)
        games = selectors.player_games(player=player, limit=20)
        return Response(
            {
                "username": player.get_username(),
                "joined": serializers.DateTimeField().to_representation(player.date_joined),
                "daily": player_board_results(player=player, limit=30),
                "games": GameOutput(games, many=True, context={"request": request}).data,
            }
        )


# --- Health ------------------------------------------------------------------------


def healthz(request: HttpRequest) -> JsonResponse:
    """200 `{"status": "ok"}` when the database answers, else 503."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:  # any database failure means "not healthy", whatever its class
        return JsonResponse(
            {"error": {"code": "database_unavailable", "message": "The database does not answer."}},
            status=503,
        )
    return JsonResponse({"status": "ok"})
