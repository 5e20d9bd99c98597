"""The REST API of friends, leagues and standings: thin views over services and selectors.

Everything under `/api/leagues/{slug}/` is for the league's members: anyone
else gets the same 404 `not_found` as for a league that does not exist.
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
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from easyharp_site.accounts.api import username_schema
from easyharp_site.dates import parse_day, today
from easyharp_site.errors import BODY_REFUSALS, error_responses
from easyharp_site.fields import TextField
from games import selectors as games_selectors
from games.api import DAY_NOT_FOUND, day_parameter
from leaderboards.api import LeaderboardApi, board_among
from leagues import selectors, services
from leagues.models import Period

LEAGUE_NOT_FOUND = "`not_found`: no such league, or the player is not one of its members."


def _username_parameter() -> OpenApiParameter:
    return OpenApiParameter(
        "username",
        username_schema(),
        OpenApiParameter.PATH,
        description="A player's username; an unknown name is 404.",
    )


def _slug_parameter() -> OpenApiParameter:
    return OpenApiParameter(
        "slug",
        # The name's slug, then six hex digits (`league_create`): never `join`.
        {"type": "string", "pattern": "^[-a-z0-9_]*-[0-9a-f]{6}$", "maxLength": 60},
        OpenApiParameter.PATH,
        description="The league's slug, as `POST /api/leagues/` gave it (its name's "
        "slug, a hyphen and six hex digits).",
    )


# --- Following -----------------------------------------------------------------------


class FollowApi(APIView):
    """Follow a player (`POST`) or stop following them (`DELETE`).

    The players one follows and oneself make up the friends boards
    (`scope=friends` on a day's board). At most 1,000 follows per player.
    """

    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=None,
        parameters=[_username_parameter()],
        responses={
            200: inline_serializer(
                "Following",
                {"player": serializers.CharField(), "following": serializers.BooleanField()},
            ),
            **error_responses(
                403,
                404,
                409,
                codes={
                    400: "`cannot_follow_self`.",
                    404: "`not_found`: there is no such player.",
                    409: "`too_many_follows` (with `limit`).",
                },
            ),
        },
    )
    def post(self, request: Request, username: str) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        followee = games_selectors.player_get(username=username)
        services.follow_add(follower=request.user, followee=followee)
        return Response({"player": followee.get_username(), "following": True})

    @extend_schema(
        parameters=[_username_parameter()],
        responses={
            200: inline_serializer(
                "NotFollowing",
                {"player": serializers.CharField(), "following": serializers.BooleanField()},
            ),
            **error_responses(403, 404, codes={404: "`not_found`: there is no such player."}),
        },
    )
    def delete(self, request: Request, username: str) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        followee = games_selectors.player_get(username=username)
        services.follow_remove(follower=request.user, followee=followee)
        return Response({"player": followee.get_username(), "following": False})


class PlayerSearchApi(APIView):
    """Players whose name starts with `q`, in any case: up to 20, in name order, with
    whether the signed-in player follows each (`false` for a visitor).

    Never the signed-in player, nor a banned or deleted player. Rate limited per
    client address (`THROTTLE_SEARCH`).
    """

    throttle_scope = "search"

    @extend_schema(
        # Named: drf-spectacular would call it "players_retrieve", as the player's page is.
        operation_id="players_search",
        parameters=[
            OpenApiParameter(
                "q",
                # No pattern: a name's letters and digits are Python's `\w`
                # (Unicode), which JSON Schema's regular expressions cannot state.
                {"type": "string", "minLength": 1, "maxLength": selectors.SEARCH_PREFIX_MAX},
                OpenApiParameter.QUERY,
                required=True,
                description="The beginning of a name: letters, digits and `_ . @ + -` "
                "(anything else is a 400 `invalid_search`).",
            )
        ],
        responses={
            200: inline_serializer(
                "PlayerSearch",
                {
                    "players": inline_serializer(
                        "FoundPlayer",
                        {
                            "username": serializers.CharField(),
                            "following": serializers.BooleanField(
                                help_text="Whether the signed-in player follows them."
                            ),
                        },
                        many=True,
                    )
                },
            ),
            **error_responses(
                codes={
                    400: "`invalid_search`: `q` missing, empty, too long, or holding a "
                    "character no name has."
                }
            ),
        },
    )
    def get(self, request: Request) -> Response:
        prefix = request.query_params.get("q", "")
        return Response({"players": selectors.player_search(prefix=prefix, viewer=request.user)})


class FollowingApi(APIView):
    """The players the signed-in player follows, by name (at most 1,000)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        responses={
            200: inline_serializer(
                "FollowedPlayers", {"players": serializers.ListField(child=serializers.CharField())}
            ),
            **error_responses(),
        }
    )
    def get(self, request: Request) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        return Response({"players": selectors.followed_players(follower=request.user)})


# --- Leagues ------------------------------------------------------------------------


@extend_schema_serializer(component_name="League")
class LeagueOutput(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    owner = serializers.CharField()
    members = serializers.IntegerField(help_text="How many members it has (at most 1,000).")
    invite_code = serializers.CharField(
        help_text="Joins the league (`POST /api/leagues/join/`), as does the link "
        "`/leagues/join/{invite_code}/`."
    )
    is_owner = serializers.BooleanField()
    created_at = serializers.DateTimeField()


class LeaguesApi(APIView):
    """The signed-in player's leagues (`GET`), or a new league they own (`POST`).

    A player is in at most 50 leagues (those they own count).
    """

    permission_classes = [IsAuthenticated]

    @extend_schema_serializer(component_name="LeagueCreation")
    class InputSerializer(serializers.Serializer):
        name = TextField(max_length=services.LEAGUE_NAME_MAX)

    @extend_schema(responses={200: LeagueOutput(many=True), **error_responses()})
    def get(self, request: Request) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        leagues = selectors.player_leagues(player=request.user)
        return Response([selectors.league_dict(league, viewer=request.user) for league in leagues])

    @extend_schema(
        request=InputSerializer,
        responses={
            201: LeagueOutput,
            **error_responses(
                *BODY_REFUSALS,
                409,
                codes={
                    400: "`invalid_name`: an empty name.",
                    409: "`too_many_leagues` (with `limit`).",
                },
            ),
        },
    )
    def post(self, request: Request) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        league = services.league_create(owner=request.user, name=data.validated_data["name"])
        return Response(
            selectors.league_dict(league, viewer=request.user), status=status.HTTP_201_CREATED
        )


class LeagueJoinApi(APIView):
    """Join a league with its invite code, or its invite link.

    Joining again is harmless (200 with the league). Rate limited per client
    address and per player (`THROTTLE_JOIN`).
    """

    permission_classes = [IsAuthenticated]
    throttle_scope = "join"

    @extend_schema_serializer(component_name="LeagueJoining")
    class InputSerializer(serializers.Serializer):
        code = TextField(max_length=500, help_text="The invite code, or the invite link.")

    @extend_schema(
        request=InputSerializer,
        responses={
            200: LeagueOutput,
            **error_responses(
                *BODY_REFUSALS,
                404,
                409,
                429,
                codes={
                    404: "`invalid_code`: no league has that code (or the link's).",
                    409: "`league_full`, `too_many_leagues` (with `limit`).",
                },
            ),
        },
    )
    def post(self, request: Request) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        league = services.league_join(player=request.user, code=data.validated_data["code"])
        return Response(selectors.league_dict(league, viewer=request.user))


class LeagueApi(APIView):
    """A league, with its members' names (`GET`); the owner deletes it (`DELETE`)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[_slug_parameter()],
        responses={
            200: inline_serializer(
                "LeagueWithMembers",
                {
                    "slug": serializers.CharField(),
                    "name": serializers.CharField(),
                    "owner": serializers.CharField(),
                    "members": serializers.IntegerField(),
                    "invite_code": serializers.CharField(),
                    "is_owner": serializers.BooleanField(),
                    "created_at": serializers.DateTimeField(),
                    "players": serializers.ListField(child=serializers.CharField()),
                },
            ),
            **error_responses(404, codes={404: LEAGUE_NOT_FOUND}),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        league = selectors.league_get(slug=slug, viewer=request.user)
        return Response(
            {
                **selectors.league_dict(league, viewer=request.user),
                "players": selectors.league_members(league=league),
            }
        )

    @extend_schema(
        parameters=[_slug_parameter()],
        responses={
            204: None,
            **error_responses(
                403,
                404,
                codes={403: "`not_owner`: only the owner deletes a league.", 404: LEAGUE_NOT_FOUND},
            ),
        },
    )
    def delete(self, request: Request, slug: str) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        services.league_delete(owner=request.user, slug=slug)
        return Response(status=status.HTTP_204_NO_CONTENT)


class LeagueLeaveApi(APIView):
    """The signed-in member leaves the league (the owner deletes it instead)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=None,
        parameters=[_slug_parameter()],
        responses={
            204: None,
            **error_responses(
                403,
                404,
                409,
                codes={404: LEAGUE_NOT_FOUND, 409: "`owner_cannot_leave`."},
            ),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        services.league_leave(player=request.user, slug=slug)
        return Response(status=status.HTTP_204_NO_CONTENT)


class LeagueMemberApi(APIView):
    """The owner removes a member."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[_slug_parameter(), _username_parameter()],
        responses={
            204: None,
            **error_responses(
                403,
                404,
                codes={
                    403: "`not_owner`: only the owner removes members.",
                    404: f"{LEAGUE_NOT_FOUND} `not_a_member`: no other member has that name.",
                },
            ),
        },
    )
    def delete(self, request: Request, slug: str, username: str) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        services.league_member_remove(owner=request.user, slug=slug, username=username)
        return Response(status=status.HTTP_204_NO_CONTENT)


class LeagueInviteApi(APIView):
    """The owner renews the invite code: the old code and link stop working."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=None,
        parameters=[_slug_parameter()],
        responses={
            200: LeagueOutput,
            **error_responses(
                403,
                404,
                codes={403: "`not_owner`: only the owner renews the code.", 404: LEAGUE_NOT_FOUND},
            ),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        league = services.league_code_renew(owner=request.user, slug=slug)
        return Response(selectors.league_dict(league, viewer=request.user))


class LeagueBoardApi(APIView):
    """A day's board narrowed to the league's members, ranked among them, with the
    signed-in member's own entry in `me` (when they have one)."""

    permission_classes = [IsAuthenticated]

    class InputSerializer(LeaderboardApi.InputSerializer):
        scope = None  # type: ignore[assignment]

    @extend_schema(
        parameters=[_slug_parameter(), day_parameter(), InputSerializer],
        responses={
            200: LeaderboardApi.OutputSerializer,
            **error_responses(
                404,
                codes={
                    404: f"{LEAGUE_NOT_FOUND} {DAY_NOT_FOUND} `not_on_board`: `around=me` "
                    "for a member without an entry on that board."
                },
            ),
        },
    )
    def get(self, request: Request, slug: str, date: str) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        league = selectors.league_get(slug=slug, viewer=request.user)
        query = self.InputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        day = games_selectors.daily_deal_get(date=parse_day(date))
        return Response(
            board_among(
                date=day.date,
                params=query.validated_data,
                audience=selectors.league_members_sql(league.pk),
                viewer=request.user.pk,
            )
        )


# --- Standings ---------------------------------------------------------------------


@extend_schema_serializer(component_name="Standing")
class StandingOutput(serializers.Serializer):
    rank = serializers.IntegerField()
    player = serializers.CharField()
    points = serializers.IntegerField(help_text="The sum of the player's day points.")
    days = serializers.IntegerField(help_text="Days played (on the day's score board).")
    best = serializers.IntegerField(help_text="The player's best day's points.")


class _Given(serializers.Field):
    """A query parameter given empty (`?period=`) is refused, not read as absent (DRF's
    form semantics would give the default)."""

    def get_value(self, dictionary: Any) -> Any:
        if dictionary.get(self.field_name) == "":
            return ""
        return super().get_value(dictionary)


class _ChoiceParameter(_Given, serializers.ChoiceField):
    pass


class _DateParameter(_Given, serializers.DateField):
    pass


class _StandingsQuery(serializers.Serializer):
    period = _ChoiceParameter(choices=Period.values, default=Period.WEEK)
    at = _DateParameter(
        required=False,
        input_formats=["%Y-%m-%d"],
        help_text="A day of the week or month (YYYY-MM-DD), today or before; today by default.",
    )

    def validate_at(self, value: datetime.date) -> datetime.date:
        # A day to come has no standings yet (and the week of 9999-12-31 ends
        # past the last date Python can hold).
        if value > today():
            raise serializers.ValidationError("A day that has not come yet has no standings.")
        return value

    def at_or_today(self) -> datetime.date:
        at: datetime.date = self.validated_data.get("at") or today()
        return at


STANDINGS_REFUSAL = "`invalid` (with `fields.at`): `at` is a day that has not come yet."

_STANDINGS_FIELDS: dict[str, serializers.Field] = {
    "period": serializers.CharField(),
    "start": serializers.DateField(),
    "end": serializers.DateField(),
    "settled_through": serializers.DateField(
        allow_null=True, help_text="The last day counted so far (days count once closed)."
    ),
    "total": serializers.IntegerField(),
    "entries": StandingOutput(many=True),
    "me": StandingOutput(allow_null=True, required=False),
}


class StandingsApi(APIView):
    """The weekly or monthly standings of every player (docs/RULES.md 9.5), by rank,
    and the signed-in player's own place in `me`."""

    class InputSerializer(_StandingsQuery):
        limit = serializers.IntegerField(
            min_value=1, max_value=selectors.STANDINGS_LIMIT_MAX, default=50
        )
        offset = serializers.IntegerField(min_value=0, max_value=1_000_000_000, default=0)

    @extend_schema(
        parameters=[InputSerializer],
        responses={
            200: inline_serializer(
                "Standings",
                {
                    **_STANDINGS_FIELDS,
                    "offset": serializers.IntegerField(),
                    "limit": serializers.IntegerField(),
                },
            ),
            **error_responses(codes={400: STANDINGS_REFUSAL}),
        },
    )
    def get(self, request: Request) -> Response:
        query = self.InputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        return Response(
            selectors.standings_page(
                period=params["period"],
                at=query.at_or_today(),
                limit=params["limit"],
                offset=params["offset"],
                viewer=request.user,
            )
        )


class LeagueStandingsApi(APIView):
    """The league's members in the weekly or monthly standings, ranked among them."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[_slug_parameter(), _StandingsQuery],
        responses={
            200: inline_serializer("LeagueStandings", _STANDINGS_FIELDS),
            **error_responses(404, codes={400: STANDINGS_REFUSAL, 404: LEAGUE_NOT_FOUND}),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        league = selectors.league_get(slug=slug, viewer=request.user)
        query = _StandingsQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(
            selectors.league_standings(
                league=league,
                period=query.validated_data["period"],
                at=query.at_or_today(),
                viewer=request.user,
            )
        )
