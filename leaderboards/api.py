"""The REST API of the leaderboards: thin views over `leaderboards.selectors`.

The boards of a day, and a player's page (their results on the boards, with
their games as `games.api` shows them).
"""

from __future__ import annotations

import datetime
from typing import Any

from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_serializer,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from easyharp_site.accounts.api import username_schema
from easyharp_site.dates import parse_day
from easyharp_site.errors import ServiceError, error_responses
from games import selectors as games_selectors
from games.api import DAY_NOT_FOUND, GameOutput, day_parameter
from leaderboards.audiences import AudienceSql, audience_sql
from leaderboards.models import Board
from leaderboards.selectors import (
    PAGE_LIMIT_MAX,
    leaderboard_among,
    leaderboard_around,
    leaderboard_page,
    player_board_results,
)


@extend_schema_serializer(component_name="LeaderboardEntry")
class EntrySerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    player = serializers.CharField()
    score = serializers.IntegerField()
    moves = serializers.IntegerField()
    won = serializers.BooleanField()
    duration_ms = serializers.IntegerField(
        allow_null=True,
        help_text="Milliseconds the ranked game took by the server's clock (null: not measured).",
    )
    game = serializers.IntegerField()
    submitted_at = serializers.DateTimeField()


class LeaderboardApi(APIView):
    """One page of a day's board, or (`around=me`) the page centred on the signed-in player.

    Each player's ranked game of the day only (not assisted, not voided).
    `scope=friends` narrows the board to the signed-in player and the players
    they follow, ranked among them, with the player's own entry in `me`.
    Boards: `score` (high score, then fewer moves, then shorter duration, then
    earlier) and `moves` (won games only: fewer moves, then high score, then
    shorter duration, then earlier).
    """

    class InputSerializer(serializers.Serializer):
        order = serializers.ChoiceField(choices=Board.values, default=Board.SCORE)
        limit = serializers.IntegerField(min_value=1, max_value=PAGE_LIMIT_MAX, default=50)
        offset = serializers.IntegerField(min_value=0, max_value=1_000_000_000, default=0)
        around = serializers.ChoiceField(choices=["me"], required=False)
        scope = serializers.ChoiceField(
            choices=["all", "friends"],
            default="all",
            help_text="`friends`: the signed-in player and the players they follow.",
        )

    @extend_schema_serializer(component_name="LeaderboardPage")
    class OutputSerializer(serializers.Serializer):
        date = serializers.DateField()
        deal = serializers.CharField(allow_null=True)
        order = serializers.CharField()
        total = serializers.IntegerField()
        offset = serializers.IntegerField()
        limit = serializers.IntegerField()
        entries = EntrySerializer(many=True)
        me = EntrySerializer(required=False)

    @extend_schema(
        # The query's bounds and defaults, as the serializer checks them.
        parameters=[day_parameter(), InputSerializer],
        responses={
            200: OutputSerializer,
            **error_responses(
                404,
                codes={
                    401: "`not_authenticated`: `around=me` or `scope=friends` without a "
                    "signed-in player.",
                    404: f"{DAY_NOT_FOUND} `not_on_board`: `around=me` for a player "
                    "without an entry on that board.",
                },
            ),
        },
    )
    def get(self, request: Request, date: str) -> Response:
        query = self.InputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        day = games_selectors.daily_deal_get(date=parse_day(date))
        if params["scope"] == "friends" or "around" in params:
            _require_player(request, "around=me" if "around" in params else "scope=friends")
        if params["scope"] == "friends":
            assert request.user.is_authenticated
            return Response(
                board_among(
                    date=day.date,
                    params=params,
                    audience=audience_sql(kind="friends", id=request.user.pk),
                    viewer=request.user.pk,
                )
            )
        if "around" not in params:
            page = leaderboard_page(
                date=day.date, order=params["order"], limit=params["limit"], offset=params["offset"]
            )
            return Response(page)
        assert request.user.is_authenticated
        around = leaderboard_around(
            date=day.date, order=params["order"], player=request.user, limit=params["limit"]
        )
        if around is None:
            raise ServiceError(
                "not_on_board",
                f"You have no entry on the {params['order']} board of {day.date.isoformat()}.",
                status_code=status.HTTP_404_NOT_FOUND,
            )
        return Response(around)


def _require_player(request: Request, what: str) -> None:
    if not request.user.is_authenticated:
        raise ServiceError(
            "not_authenticated",
            f"{what} needs a signed-in player.",
            status_code=status.HTTP_401_UNAUTHORIZED,
        )


def board_among(
    *, date: datetime.date, params: dict[str, Any], audience: AudienceSql, viewer: int
) -> dict[str, Any]:
    """A board narrowed to an audience as the API shows it: the page asked for
    (or, with `around=me`, the page centred on the viewer) and the viewer's `me`.

    Shared by the friends board and the leagues' boards.
    """
    board = leaderboard_among(
        date=date,
        order=params["order"],
        audience=audience,
        limit=params["limit"],
        offset=params["offset"],
        mine=(viewer,),
        around=viewer if "around" in params else None,
    )
    me = board.pop("mine")[viewer]
    if me is not None:
        board["me"] = me
    elif "around" in params:
        raise ServiceError(
            "not_on_board",
            f"You have no entry on the {params['order']} board of {date.isoformat()}.",
            status_code=status.HTTP_404_NOT_FOUND,
        )
    return board


@extend_schema_serializer(component_name="PlayerDay")
class PlayerDaySerializer(serializers.Serializer):
    """A player's result of one day: their entry on each board (null when not on it)."""

    date = serializers.DateField()
    deal = serializers.CharField(allow_null=True)
    score = EntrySerializer(allow_null=True)
    moves = EntrySerializer(allow_null=True)


class PlayerApi(APIView):
    """A player's daily results (last 30 days) and recent games (last 20)."""

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "username",
                username_schema(),
                OpenApiParameter.PATH,
                description="A player's username; an unknown name is 404.",
            )
        ],
        responses={
            200: inline_serializer(
                "Player",
                {
                    "username": serializers.CharField(),
                    "joined": serializers.DateTimeField(),
                    "daily": PlayerDaySerializer(many=True),
                    "games": GameOutput(many=True),
                },
            ),
            **error_responses(404, codes={404: "`not_found`: there is no such player."}),
        },
    )
    def get(self, request: Request, username: str) -> Response:
        player = games_selectors.player_get(username=username)
        games = games_selectors.player_games(player=player, limit=20)
        return Response(
            {
                "username": player.get_username(),
                "joined": serializers.DateTimeField().to_representation(player.date_joined),
                "daily": player_board_results(player=player, limit=30),
                "games": GameOutput(games, many=True, context={"request": request}).data,
            }
        )
