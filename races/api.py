"""The REST API of races: thin views over services and selectors.

A race is created, joined, started and left here (or on its page); its
actions go over its socket only (`races.consumers`). A race's state is read
by anyone who has its code: each player's progress, never a table or a move.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from easyharp_site.errors import BODY_REFUSALS, error_responses
from easyharp_site.fields import NumberChoiceField
from easyharp_site.parsers import SafeJSONParser
from races import selectors, services
from races.models import TIME_LIMITS_MINUTES, Race

RACE_NOT_FOUND = "`not_found`: no race has that code."
RACE_STATUSES = ["lobby", "countdown", "running", "over"]


def _code_parameter() -> OpenApiParameter:
    return OpenApiParameter(
        "code",
        {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$", "maxLength": 32},
        OpenApiParameter.PATH,
        description="The race's code, as `POST /api/races/` gave it (the end of its link).",
    )


class RacerOutput(serializers.Serializer):
    player = serializers.CharField()
    place = serializers.IntegerField(
        allow_null=True,
        help_text="The place in the race order, final once over (none when nobody played).",
    )
    score = serializers.IntegerField()
    moves = serializers.IntegerField()
    foundations = serializers.IntegerField(help_text="Cards on the foundations, 0 to 104.")
    won = serializers.BooleanField()
    time_ms = serializers.IntegerField(
        allow_null=True, help_text="When the last action came, in ms since the start."
    )
    left = serializers.BooleanField()
    removed = serializers.BooleanField(
        help_text="Put out of the race by a moderator (banned): `left` too, last, never the winner."
    )
    away = serializers.BooleanField(
        help_text="No action nor heartbeat for 30 seconds while the race runs."
    )
    game = serializers.IntegerField(
        allow_null=True, help_text="The player's game (its replay), once the race is over."
    )


@extend_schema_serializer(component_name="Race")
class RaceOutput(serializers.Serializer):
    code = serializers.CharField()
    url = serializers.CharField(help_text="The race's page, the link to share.")
    status = serializers.ChoiceField(choices=RACE_STATUSES)
    end = serializers.CharField(
        allow_null=True, help_text="Once over: `won`, `time`, `left` or `cancelled`."
    )
    deal = serializers.CharField(
        allow_null=True,
        help_text="Told to its players from the countdown on, to anyone once it is over.",
    )
    time_limit_s = serializers.IntegerField()
    max_players = serializers.IntegerField()
    host = serializers.CharField(allow_null=True)
    winner = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    starts_at = serializers.DateTimeField(allow_null=True)
    ends_at = serializers.DateTimeField(allow_null=True)
    ended_at = serializers.DateTimeField(allow_null=True)
    rematch = serializers.CharField(
        allow_null=True,
        help_text="Once over: the code of the race its players made to play again.",
    )
    players = RacerOutput(many=True)


@extend_schema_serializer(component_name="PlayerRace")
class PlayerRaceOutput(serializers.Serializer):
    code = serializers.CharField()
    created_at = serializers.DateTimeField()
    status = serializers.ChoiceField(choices=RACE_STATUSES)
    end = serializers.CharField(
        allow_blank=True, help_text="`won`, `time`, `left`, `cancelled`; empty until stored."
    )
    time_limit_s = serializers.IntegerField()
    players = serializers.IntegerField()
    winner = serializers.CharField(allow_null=True)
    place = serializers.IntegerField(allow_null=True, help_text="The player's final place.")
    score = serializers.IntegerField()
    moves = serializers.IntegerField()
    won = serializers.BooleanField()
    game = serializers.IntegerField(allow_null=True, help_text="The player's game (its replay).")


def _race(race: Race, viewer: Any) -> dict[str, Any]:
    """The race as `viewer` may see it: a player of it whole, anyone else without the
    deal until it is over (`races.selectors.race_state_watched`)."""
    return {
        **selectors.race_state_for(race=race, viewer=viewer, now=timezone.now()),
        "url": f"/races/{race.code}/",
    }


class RacesApi(APIView):
    """The signed-in player's races, newest first (`GET`), or a new race they host
    (`POST`) on a fresh random deal, never a day's."""

    permission_classes = [IsAuthenticated]
    # JSON only: a form's "5" would pass for the number the schema asks for.
    parser_classes = [SafeJSONParser]

    @extend_schema_serializer(component_name="RaceCreation")
    class InputSerializer(serializers.Serializer):
        minutes = NumberChoiceField(
            choices=list(TIME_LIMITS_MINUTES), help_text="The time limit, in minutes."
        )

    @extend_schema(responses={200: PlayerRaceOutput(many=True), **error_responses()})
    def get(self, request: Request) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        return Response(selectors.player_races(player=request.user))

    @extend_schema(
        request=InputSerializer,
        responses={
            201: RaceOutput,
            **error_responses(
                *BODY_REFUSALS,
                codes={429: "`throttled`: the player created races past the `race` rate."},
            ),
        },
    )
    def post(self, request: Request) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        race = services.race_create(host=request.user, minutes=data.validated_data["minutes"])
        return Response(_race(race, request.user), status=status.HTTP_201_CREATED)


class RaceApi(APIView):
    """A race: its status and each player's progress, for anyone who has its code."""

    @extend_schema(
        parameters=[_code_parameter()],
        responses={200: RaceOutput, **error_responses(404, codes={404: RACE_NOT_FOUND})},
    )
    def get(self, request: Request, code: str) -> Response:
        return Response(_race(selectors.race_get(code=code), request.user))


class RaceJoinApi(APIView):
    """Join the race in its lobby (joining again is harmless)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=None,
        parameters=[_code_parameter()],
        responses={
            200: RaceOutput,
            **error_responses(
                403,
                404,
                409,
                codes={
                    404: RACE_NOT_FOUND,
                    409: "`race_full` (8 players, with `limit`), `race_started`, `race_over`.",
                },
            ),
        },
    )
    def post(self, request: Request, code: str) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        return Response(_race(services.race_join(player=request.user, code=code), request.user))


class RaceStartApi(APIView):
    """The host starts the race: play begins for everyone after a 5-second countdown
    (`starts_at`). Starting again changes nothing."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=None,
        parameters=[_code_parameter()],
        responses={
            200: RaceOutput,
            **error_responses(
                403,
                404,
                409,
                codes={
                    403: "`not_host`: only the host starts the race.",
                    404: RACE_NOT_FOUND,
                    409: "`race_over`.",
                },
            ),
        },
    )
    def post(self, request: Request, code: str) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        return Response(_race(services.race_start(player=request.user, code=code), request.user))


class RaceLeaveApi(APIView):
    """Leave the race: gone from its lobby, or, once started, the game stops where it is
    and keeps its place. Leaving again changes nothing."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=None,
        parameters=[_code_parameter()],
        responses={
            200: RaceOutput,
            **error_responses(
                403,
                404,
                codes={403: "`not_in_race`: the player is not in this race.", 404: RACE_NOT_FOUND},
            ),
        },
    )
    def post(self, request: Request, code: str) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        return Response(_race(services.race_leave(player=request.user, code=code), request.user))


class RaceRematchApi(APIView):
    """Play again: the race's rematch once it is over, for its players (the same time
    limit, a fresh deal). The first to ask makes it (201) and hosts it; every later
    asker joins it (200). The others hear of it on the race's socket (`rematch`)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=None,
        parameters=[_code_parameter()],
        responses={
            200: RaceOutput,
            201: RaceOutput,
            **error_responses(
                403,
                404,
                409,
                429,
                codes={
                    403: "`not_in_race`: only the race's players make or join its rematch.",
                    404: RACE_NOT_FOUND,
                    409: "`race_not_over`; `race_started`, `race_full`: the rematch is under "
                    "way or full.",
                    429: "`throttled`: the player created races past the `race` rate.",
                },
            ),
        },
    )
    def post(self, request: Request, code: str) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        rematch, made = services.race_rematch(player=request.user, code=code)
        return Response(
            _race(rematch, request.user),
            status=status.HTTP_201_CREATED if made else status.HTTP_200_OK,
        )
