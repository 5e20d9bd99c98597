"""The REST API of the leaderboards: thin views over `leaderboards.selectors`.

The boards of a day, and a player's page (their results on the boards, with
their games as `games.api` shows them).
"""

from __future__ import annotations

import datetime
from typing import Any

from django.urls import reverse
from django.utils.translation import gettext_noop
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
from easyharp_site.dates import parse_day, today
from easyharp_site.errors import ServiceError, error_responses
from easyharp_site.site import site_url
from games import selectors as games_selectors
from games.api import (
    DAY_NOT_FOUND,
    NO_SUCH_GAME,
    GameOutput,
    day_parameter,
    game_id_parameter,
)
from games.models import DailyDeal
from leaderboards.audiences import AudienceSql, Members, audience_off_board
from leaderboards.badges import BADGE_CODES
from leaderboards.cards import share_grid, share_text
from leaderboards.models import Board
from leaderboards.selectors import (
    DAYS_LIMIT_MAX,
    PAGE_LIMIT_MAX,
    day_results,
    days_page,
    game_share,
    leaderboard_among,
    leaderboard_around,
    leaderboard_page,
    player_badges,
    player_board_results,
    player_stats,
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


@extend_schema_serializer(component_name="AssistedEntry")
class AssistedEntrySerializer(serializers.Serializer):
    player = serializers.CharField()
    score = serializers.IntegerField()
    moves = serializers.IntegerField()
    won = serializers.BooleanField()
    duration_ms = serializers.IntegerField(allow_null=True)


class LeaderboardApi(APIView):
    """One page of a day's board, or (`around=me`) the page centred on the signed-in player.

    Each player's ranked game of the day only (not assisted, not voided).
    `scope=friends` narrows the board to the signed-in player and the players
    they follow, ranked among them, with the player's own entry in `me`, and
    lists the friends off the board: `assisted` (a hint was used) and
    `not_played` (no ranked game of the day yet).
    Boards: `score` (won games before the others, then high score, then fewer
    moves, then shorter duration, then earlier) and `moves` (won games only:
    fewer moves, then high score, then shorter duration, then earlier).
    """

    # Who a viewer's friends are: the leagues' read, which the site's wiring passes
    # (`board_api_urls`); without it `scope=friends` is refused.
    friends: Members | None = None

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
        assisted = AssistedEntrySerializer(
            many=True,
            required=False,
            help_text="`scope=friends` only: the friends whose ranked game of the day used a "
            "hint (assisted: on no board), by name.",
        )
        not_played = serializers.ListField(
            child=serializers.CharField(),
            required=False,
            help_text="`scope=friends` only: the friends without a ranked game of the day yet, "
            "by name.",
        )
        replays_locked = serializers.BooleanField(
            help_text="True while the day runs and the viewer has not finished their ranked "
            "game of it: the entries' games then refuse their logs and replays (403 "
            "`replay_locked`), except the viewer's own, until `replays_open_at`."
        )
        replays_open_at = serializers.DateTimeField(
            help_text="When the day closes and its games' replays open to everyone."
        )

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
        return Response({**self._board(request, day.date, params), **_replays(request, day)})

    def _board(self, request: Request, day: datetime.date, params: dict[str, Any]) -> Any:
        if params["scope"] == "friends" or "around" in params:
            _require_player(request, "around=me" if "around" in params else "scope=friends")
        if params["scope"] == "friends":
            assert request.user.is_authenticated
            if self.friends is None:
                raise ServiceError("bad_scope", "This server keeps no friends boards.")
            viewer = request.user.pk
            audience = self.friends(viewer)
            return {
                **board_among(date=day, params=params, audience=audience, viewer=viewer),
                **audience_off_board(date=day, audience=audience, exclude=(viewer,)),
            }
        if "around" not in params:
            return leaderboard_page(
                date=day, order=params["order"], limit=params["limit"], offset=params["offset"]
            )
        assert request.user.is_authenticated
        around = leaderboard_around(
            date=day, order=params["order"], player=request.user, limit=params["limit"]
        )
        if around is None:
            raise ServiceError(
                "not_on_board",
                f"You have no entry on the {params['order']} board of {day.isoformat()}.",
                status_code=status.HTTP_404_NOT_FOUND,
            )
        return around


def _replays(request: Request, day: DailyDeal) -> dict[str, Any]:
    """Whether the day's replays are still closed to the viewer, and when they open."""
    lock = games_selectors.day_lock(date=day.date, viewer=request.user)
    return {"replays_locked": lock is not None, "replays_open_at": day.closes_at}


def _require_player(request: Request, what: str) -> None:
    if not request.user.is_authenticated:
        raise ServiceError(
            "not_authenticated",
            f"{what} needs a signed-in player.",
            status_code=status.HTTP_401_UNAUTHORIZED,
        )


def board_among(
    *,
    date: datetime.date,
    params: dict[str, Any],
    audience: AudienceSql,
    viewer: int,
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
    assisted = serializers.BooleanField(
        help_text="A hint was used during the day's ranked game: shown, on no board."
    )
    held = serializers.BooleanField(
        help_text="The day's ranked game is held for review, on no board until a moderator "
        "has looked at it. Only the player is told: false for everyone else."
    )


def username_parameter() -> OpenApiParameter:
    """The `{username}` of a player's URL."""
    return OpenApiParameter(
        "username",
        username_schema(),
        OpenApiParameter.PATH,
        description="A player's username; an unknown name is 404.",
    )


NO_SUCH_PLAYER = {404: "`not_found`: there is no such player."}


class PlayerApi(APIView):
    """A player's daily results (last 30 days) and recent games (last 20).

    A day whose ranked game is assisted is listed without entries. The player
    alone is told which of their games are held for review (`held`).
    """

    @extend_schema(
        parameters=[username_parameter()],
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
            **error_responses(404, codes=NO_SUCH_PLAYER),
        },
    )
    def get(self, request: Request, username: str) -> Response:
        player = games_selectors.player_get(username=username)
        games = games_selectors.player_games(player=player, limit=20)
        return Response(
            {
                "username": player.get_username(),
                "joined": serializers.DateTimeField().to_representation(player.date_joined),
                "daily": player_board_results(
                    player=player, limit=30, held=request.user.pk == player.pk
                ),
                "games": GameOutput(games, many=True, context={"request": request}).data,
            }
        )


class MovesOverParSerializer(serializers.Serializer):
    min = serializers.IntegerField(
        allow_null=True, help_text="Fewest moves over par in the bucket (null: no lower bound)."
    )
    max = serializers.IntegerField(
        allow_null=True, help_text="Most moves over par in the bucket (null: no upper bound)."
    )
    games = serializers.IntegerField(help_text="Won games in the bucket.")


class PlayerStatsApi(APIView):
    """A player's record over their games on the boards.

    Their ranked games only, neither assisted nor voided. A day counts for the
    streak when its ranked game was won; the current streak still stands until
    today's deal closes, so not having played yet today does not break it.
    `moves_vs_par` counts won games by moves over the day's par; `percentile`
    is the share of players ranked below them on the score board of the last
    day they played (`percentile_date`; live while that day runs).
    """

    @extend_schema_serializer(component_name="PlayerStats")
    class OutputSerializer(serializers.Serializer):
        played = serializers.IntegerField()
        won = serializers.IntegerField()
        win_rate = serializers.FloatField(allow_null=True, help_text="won / played; null: none.")
        current_streak = serializers.IntegerField()
        max_streak = serializers.IntegerField()
        best_score = serializers.IntegerField(allow_null=True)
        best_moves = serializers.IntegerField(allow_null=True)
        moves_vs_par = MovesOverParSerializer(many=True)
        percentile = serializers.IntegerField(allow_null=True, min_value=0, max_value=100)
        percentile_date = serializers.DateField(allow_null=True)
        percentile_rank = serializers.IntegerField(
            allow_null=True, help_text="The rank on that day's score board."
        )
        percentile_players = serializers.IntegerField(
            allow_null=True, help_text="The players on that day's score board."
        )

    @extend_schema(
        parameters=[username_parameter()],
        responses={200: OutputSerializer, **error_responses(404, codes=NO_SUCH_PLAYER)},
    )
    def get(self, request: Request, username: str) -> Response:
        player = games_selectors.player_get(username=username)
        return Response(player_stats(player=player))


@extend_schema_serializer(component_name="Badge")
class BadgeSerializer(serializers.Serializer):
    code = serializers.ChoiceField(choices=BADGE_CODES)
    mark = serializers.CharField(help_text="What its medal shows: a star or a number.")
    name = serializers.CharField(help_text="In the reader's language.")
    description = serializers.CharField(help_text="What it asks, in the reader's language.")
    goal = serializers.IntegerField()
    progress = serializers.IntegerField(help_text="How far towards the goal (at most the goal).")
    earned = serializers.BooleanField()
    earned_on = serializers.DateField(allow_null=True, help_text="The day it was earned.")
    earnable = serializers.BooleanField(
        help_text="False when the days left in the month can no longer bring it."
    )


@extend_schema_serializer(component_name="EarnedBadge")
class EarnedBadgeSerializer(BadgeSerializer):
    month = serializers.CharField(help_text="YYYY-MM")


NO_SUCH_MONTH = (
    "`invalid` (a month not written YYYY-MM), `month_not_served` (after this month, or "
    "before the first month served)."
)


class PlayerBadgesApi(APIView):
    """A player's badges of a month, and those they earned in the last twelve months.

    Counted from their days on the boards (their ranked games, neither assisted
    nor voided), each time: `every_day` (a ranked game on every day of the
    month), `par_five` (five won games at or under par), `ten_wins` (ten won
    days), `streak_30` (a streak of 30 won days standing on a day of the month,
    days before it included). `month` is this month unless given.
    """

    class InputSerializer(serializers.Serializer):
        month = serializers.RegexField(
            r"^[0-9]{4}-(0[1-9]|1[0-2])$",
            required=False,
            help_text="YYYY-MM; this month by default.",
        )

        def validate_month(self, text: str) -> datetime.date:
            try:  # year 0000 is written well but is no year
                return datetime.date.fromisoformat(f"{text}-01")
            except ValueError:
                raise serializers.ValidationError("Not a month: write it YYYY-MM.") from None

    @extend_schema_serializer(component_name="PlayerBadges")
    class OutputSerializer(serializers.Serializer):
        month = serializers.CharField(help_text="YYYY-MM")
        badges = BadgeSerializer(many=True)
        earned = EarnedBadgeSerializer(many=True, help_text="Newest month first.")

    @extend_schema(
        parameters=[username_parameter(), InputSerializer],
        responses={
            200: OutputSerializer,
            **error_responses(404, codes={400: NO_SUCH_MONTH, **NO_SUCH_PLAYER}),
        },
    )
    def get(self, request: Request, username: str) -> Response:
        query = self.InputSerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        player = games_selectors.player_get(username=username)
        current = today().replace(day=1)
        month = query.validated_data.get("month") or current
        if not games_selectors.daily_deal_first_date().replace(day=1) <= month <= current:
            raise ServiceError(
                "month_not_served",
                gettext_noop("There are no badges for {month}: no day of it is served."),
                words={"month": f"{month:%Y-%m}"},
            )
        return Response(player_badges(player=player, month=month))


@extend_schema_serializer(component_name="ScoreCount")
class ScoreCountSerializer(serializers.Serializer):
    score = serializers.IntegerField()
    players = serializers.IntegerField()


@extend_schema_serializer(component_name="MovesCount")
class MovesCountSerializer(serializers.Serializer):
    moves = serializers.IntegerField()
    players = serializers.IntegerField()


class DayResultsApi(APIView):
    """A day's results: its players, its winners, and how scores and moves spread.

    Live while the day runs (`final` false), frozen once it has closed.
    """

    @extend_schema_serializer(component_name="DayResults")
    class OutputSerializer(serializers.Serializer):
        date = serializers.DateField()
        players = serializers.IntegerField(help_text="Players on the day's score board.")
        won = serializers.IntegerField(help_text="Of them, the players who won.")
        score_distribution = ScoreCountSerializer(many=True, help_text="By ascending score.")
        moves_distribution = MovesCountSerializer(
            many=True, help_text="Won games by ascending moves."
        )
        final = serializers.BooleanField(help_text="The day has closed: these no longer move.")

    @extend_schema(
        parameters=[day_parameter()],
        responses={200: OutputSerializer, **error_responses(404, codes={404: DAY_NOT_FOUND})},
    )
    def get(self, request: Request, date: str) -> Response:
        day = games_selectors.daily_deal_get(date=parse_day(date))
        return Response(day_results(date=day.date))


@extend_schema_serializer(component_name="DayWinner")
class DayWinnerSerializer(serializers.Serializer):
    player = serializers.CharField()
    score = serializers.IntegerField()
    moves = serializers.IntegerField()
    won = serializers.BooleanField()


@extend_schema_serializer(component_name="DayOwnResult")
class DayOwnResultSerializer(serializers.Serializer):
    score = serializers.IntegerField()
    moves = serializers.IntegerField()
    won = serializers.BooleanField()
    rank = serializers.IntegerField(help_text="On the score board (final once the day closed).")


@extend_schema_serializer(component_name="ArchiveDay")
class ArchiveDaySerializer(serializers.Serializer):
    date = serializers.DateField()
    deal = serializers.CharField()
    par = serializers.IntegerField(allow_null=True)
    players = serializers.IntegerField()
    winner = DayWinnerSerializer(allow_null=True, help_text="First on the score board.")
    me = DayOwnResultSerializer(
        allow_null=True, help_text="The signed-in player's result (null: not played, or anonymous)."
    )


class DaysApi(APIView):
    """The archive: every past day, newest first, with its deal, par, players and winner,
    and the signed-in player's own result."""

    class InputSerializer(serializers.Serializer):
        limit = serializers.IntegerField(min_value=1, max_value=DAYS_LIMIT_MAX, default=30)
        offset = serializers.IntegerField(min_value=0, max_value=1_000_000, default=0)

    @extend_schema_serializer(component_name="ArchivePage")
    class OutputSerializer(serializers.Serializer):
        total = serializers.IntegerField(help_text="Past days in all.")
        offset = serializers.IntegerField()
        limit = serializers.IntegerField()
        days = ArchiveDaySerializer(many=True)

    @extend_schema(
        parameters=[InputSerializer],
        responses={200: OutputSerializer, **error_responses()},
    )
    def get(self, request: Request) -> Response:
        # A plain dict, not the QueryDict: DRF reads a blank `?limit=` of a
        # QueryDict as "not given"; here it is refused like any other non-number.
        query = self.InputSerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        user = request.user if request.user.is_authenticated else None
        page = days_page(
            until=today(),
            first=games_selectors.daily_deal_first_date(),
            player=user,
            limit=query.validated_data["limit"],
            offset=query.validated_data["offset"],
        )
        return Response(page)


class GameShareApi(APIView):
    """A game's share card: a short text and a link, without any card or action of its log.

    The day's number and date (or the deal, for practice), a grid of squares for
    its course (a row per quarter of the game, a square per 13 cards put away in
    that quarter, the row's count in words after it), whether it was won, its
    moves against the par, its time (a ranked game's), undos and whether a hint
    was used, its score, its rank of N on the day's score board and the player's streak
    (for their ranked game), in the reader's language. A ranked game played with
    a hint says "Assisted: a hint was used" and has no rank. The link is the
    game's card page, whose picture shows this game's result.
    """

    @extend_schema_serializer(component_name="ShareCard")
    class OutputSerializer(serializers.Serializer):
        text = serializers.CharField(help_text="Lines to share, the link last.")
        url = serializers.URLField(help_text="The game's card page (its result, never its log).")
        day_number = serializers.IntegerField(
            allow_null=True,
            help_text="The day's number in the series (1 on the first day served); "
            "null for a game of no day.",
        )
        grid = serializers.ListField(
            child=serializers.CharField(),
            help_text="The grid's rows, one per quarter of the game: 8 squares each, "
            "for the cards put away in that quarter: 🟩 13, 🟨 some, ⬛ none.",
        )
        course = serializers.ListField(
            child=serializers.IntegerField(min_value=0, max_value=104),
            help_text="Cards on the foundations after each quarter of the game's log.",
        )

    @extend_schema(
        parameters=[game_id_parameter()],
        responses={200: OutputSerializer, **error_responses(404, codes=NO_SUCH_GAME)},
    )
    def get(self, request: Request, game_id: int) -> Response:
        game = games_selectors.game_get(game_id=game_id)
        facts = game_share(game=game)
        url = site_url(reverse("game-card", args=[game.pk]))
        return Response(
            {
                "text": share_text(facts, url),
                "url": url,
                "day_number": facts["day_number"],
                "grid": share_grid(facts["course"]),
                "course": facts["course"],
            }
        )
