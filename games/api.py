"""The REST API of games, deals and players: thin views that parse, call and serialize.

Each view has its own small Input/Output serializers; the work is done by
`games.services` (writes) and `games.selectors` (reads), and every refusal is a
`ServiceError` or a DRF error that `easyharp_site.errors` turns into
`{"error": {"code", "message", ...}}`.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable
from typing import Any

from django.http import HttpResponse
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from easyharp_site.dates import ISO_DAY_PATTERN, parse_day, today
from easyharp_site.errors import BODY_REFUSALS, error_responses
from easyharp_site.site import site_url
from games import replays, selectors, services
from games.models import Attempt, Game
from games.pool import Requester

# What `Deal.from_code` reads: case and blanks around the code are ignored. The
# seven letters must also stand for a deal 1..999,999 (EH1-N-AAAAAAB to
# EH1-N-AACEXHN), which the pattern leaves to the engine's `invalid_deal`.
DEAL_CODE_PATTERN = r"^\s*[Ee][Hh]1-[Nn]-[A-Za-z]{7}\s*$"
DEAL_CODE_MAX = 64
DEAL_CODE_SCHEMA = {
    "type": "string",
    "pattern": DEAL_CODE_PATTERN,
    "maxLength": DEAL_CODE_MAX,
    "description": "A deal code such as `EH1-N-AAAAAAB` (any case, blanks around it "
    "ignored) whose letters stand for a deal 1 to 999,999.",
    "example": "EH1-N-AAAAAAB",
}
HINT_RESULTS = ["move", "lost", "unknown", "won"]


def game_url(game: Game) -> str:
    """The public link of a game: its replay page, or its API resource without pages."""
    try:
        path = reverse("replay", args=[game.pk])
    except NoReverseMatch:
        path = reverse("api-game-detail", args=[game.pk])
    return site_url(path)


# The 404s of a day's URL (`parse_day`, `selectors.daily_deal_get`).
DAY_NOT_FOUND = (
    "`not_found` (a date not written YYYY-MM-DD), `day_not_open` (a future day), "
    "`day_not_served` (before the first day served), `day_not_prepared`."
)


def day_parameter() -> OpenApiParameter:
    """The `{date}` of a day's URL: `YYYY-MM-DD`; anything else is a 404."""
    return OpenApiParameter(
        "date",
        {"type": "string", "pattern": f"^{ISO_DAY_PATTERN}$"},
        OpenApiParameter.PATH,
        description="A UTC day written YYYY-MM-DD; another form, or a day not served, is 404.",
    )


# --- Deals -------------------------------------------------------------------------


@extend_schema_serializer(component_name="DailyDeal")
class DailyOutput(serializers.Serializer):
    date = serializers.DateField()
    deal = serializers.CharField(source="deal_code")
    number = serializers.IntegerField()
    par = serializers.IntegerField(allow_null=True)
    closes_at = serializers.DateTimeField()


class DailyTodayApi(APIView):
    """Today's deal (UTC): the same for everyone."""

    @extend_schema(
        operation_id="daily_today",
        responses={
            200: DailyOutput,
            **error_responses(404, codes={404: "`day_not_prepared`: try again in a minute."}),
        },
    )
    def get(self, request: Request) -> Response:
        day = selectors.daily_deal_get(date=today())
        return Response(DailyOutput(day).data)


class DailyDetailApi(APIView):
    """The deal of a past or current day; a future day is 404."""

    @extend_schema(
        parameters=[day_parameter()],
        responses={
            200: DailyOutput,
            **error_responses(404, codes={404: DAY_NOT_FOUND}),
        },
    )
    def get(self, request: Request, date: str) -> Response:
        day = selectors.daily_deal_get(date=parse_day(date))
        return Response(DailyOutput(day).data)


class TableOutput(serializers.Serializer):
    """A table as the engine reads it (`games.rules.Game.table()`)."""

    class ColumnOutput(serializers.Serializer):
        down = serializers.IntegerField(help_text="Face-down cards, only counted.")
        up = serializers.ListField(child=serializers.CharField(), help_text="Bottom to top.")

    class FoundationOutput(serializers.Serializer):
        suit = serializers.CharField()
        count = serializers.IntegerField()
        top = serializers.CharField(allow_null=True)

    deal = serializers.CharField()
    columns = ColumnOutput(many=True)
    stock = serializers.IntegerField()
    waste = serializers.IntegerField()
    waste_top = serializers.CharField(allow_null=True)
    foundations = FoundationOutput(many=True)
    score = serializers.IntegerField()
    moves = serializers.IntegerField()
    won = serializers.BooleanField()
    undo_left = serializers.IntegerField()


class DealApi(APIView):
    """A deal by code, with the engine's starting table."""

    @extend_schema_serializer(component_name="DealStart")
    class OutputSerializer(serializers.Serializer):
        code = serializers.CharField()
        number = serializers.IntegerField()
        table = TableOutput()

    @extend_schema(
        parameters=[OpenApiParameter("code", DEAL_CODE_SCHEMA, OpenApiParameter.PATH)],
        responses={
            200: OutputSerializer,
            **error_responses(404, codes={404: "`invalid_deal`: the code names no deal."}),
        },
    )
    def get(self, request: Request, code: str) -> Response:
        return Response(self.OutputSerializer(selectors.deal_start(code=code)).data)


# --- Games -------------------------------------------------------------------------


@extend_schema_field(DEAL_CODE_SCHEMA)
class DealCodeField(serializers.CharField):
    """A deal code as text; the engine reads it (`games.parsing.deal_parse`, `invalid_deal`)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_length=DEAL_CODE_MAX, **kwargs)


@extend_schema_field(
    {
        "oneOf": [
            # Legal from the deal code's example, EH1-N-AAAAAAB.
            {"type": "string", "example": "S W9 S"},
            {"type": "array", "items": {"type": "string"}, "example": ["S", "W9", "S"]},
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


@extend_schema_serializer(component_name="Game")
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
    held = serializers.SerializerMethodField(
        help_text="Held for review, on no board until a moderator clears or voids it "
        "(played faster than a person can). Only the game's own player is told: "
        "false for everyone else."
    )

    def get_url(self, game: Game) -> str:
        return game_url(game)

    def get_held(self, game: Game) -> bool:
        return selectors.game_held_for(game=game, viewer=self.context["request"].user)


@extend_schema_serializer(component_name="GameWithLog")
class GameDetailOutput(GameOutput):
    log = serializers.CharField()


NO_SUCH_GAME = {404: "`not_found`: there is no game with this id."}
REPLAY_LOCKED = (
    "`replay_locked` (with `date` and `opens_at`): the game plays the deal of a day that is "
    "still running, and its log is served only to its player and to the players who have "
    "finished their ranked game of that day, until the day closes (`opens_at`). A game of "
    "the deal of a day prepared ahead is refused without `date` or `opens_at`."
)


def game_id_parameter() -> OpenApiParameter:
    """The `{game_id}` of a game's URL."""
    return OpenApiParameter(
        "game_id", {"type": "integer", "minimum": 1}, OpenApiParameter.PATH, description="A game."
    )


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


class GameDetailApi(APIView):
    """A stored game with its log: public by link, once its day has closed.

    While the day whose deal it plays runs, the log is served only to its
    player and to players who have finished their own ranked game of that day
    (403 `replay_locked` for everyone else, with when it opens).
    """

    @extend_schema(
        parameters=[game_id_parameter()],
        responses={
            200: GameDetailOutput,
            **error_responses(404, codes={**NO_SUCH_GAME, 403: REPLAY_LOCKED}),
        },
    )
    def get(self, request: Request, game_id: int) -> Response:
        game, _private = selectors.game_get_unlocked(game_id=game_id, viewer=request.user)
        return Response(GameDetailOutput(game, context={"request": request}).data)


class JsonWhateverTheAccept(BaseContentNegotiation):
    """Answer with the view's first renderer (JSON), whatever the `Accept` header asks.

    A view that renders only JSON would otherwise answer `Accept: text/html`
    with a 406 instead of the data.
    """

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> BaseParser:
        return next(iter(parsers))

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


@extend_schema_field(
    {
        "type": "array",
        "items": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
        "minItems": 3,
        "example": [3, 2, 1, "TH"],
        "description": "`[column, down, kept, *cards]`: column `column` (0-8) now has "
        "`down` face-down cards, keeps its first `kept` face-up cards and has `cards` "
        "put on them.",
    }
)
class ColumnChangeField(serializers.ListField):
    pass


@extend_schema_field(
    {
        "type": "array",
        "items": {"oneOf": [{"type": "integer"}, {"type": "string", "nullable": True}]},
        "minItems": 3,
        "maxItems": 3,
        "example": [6, 1, "AC"],
        "description": "`[slot, count, top]`: foundation `slot` (0-7) now holds `count` "
        "cards, `top` on top (null when empty).",
    }
)
class FoundationChangeField(serializers.ListField):
    pass


class ReplayStepOutput(serializers.Serializer):
    """One action and what it changed on the table; a field that is absent did not change."""

    token = serializers.CharField()
    stock = serializers.IntegerField(required=False)
    waste = serializers.IntegerField(required=False)
    waste_top = serializers.CharField(required=False, allow_null=True)
    score = serializers.IntegerField(required=False)
    moves = serializers.IntegerField(required=False)
    won = serializers.BooleanField(required=False)
    undo_left = serializers.IntegerField(required=False)
    columns = serializers.ListField(child=ColumnChangeField(), required=False)
    foundations = serializers.ListField(child=FoundationChangeField(), required=False)


# As Django's GZipMiddleware reads Accept-Encoding.
ACCEPTS_GZIP = re.compile(r"\bgzip\b")


class GameReplayApi(APIView):
    """Every table of a game: the deal's table (`start`), then, for each action,
    what it changed (`steps`). Applying steps 1..i to `start` gives the table
    after action i. Always JSON, gzip-compressed for clients that accept it.
    """

    # Always JSON, whatever the `Accept` header: the browsable API's HTML of a
    # long replay is many times its JSON. Kept gzipped, and sent so to the
    # clients that accept it, because the body is large and safe to compress:
    # it holds no secret and echoes nothing of the request, so BREACH has
    # nothing to find. Pages that carry a CSRF token are left uncompressed (no
    # site-wide GZipMiddleware).
    renderer_classes = [JSONRenderer]
    content_negotiation_class = JsonWhateverTheAccept
    # A 20,000-action replay costs about a second of CPU to build: limited per client.
    throttle_scope = "replay"

    @extend_schema_serializer(component_name="Replay")
    class OutputSerializer(serializers.Serializer):
        game = serializers.IntegerField(
            allow_null=True, help_text="The game; null for a day's par line."
        )
        deal = serializers.CharField()
        rules_version = serializers.CharField()
        start = TableOutput()
        steps = ReplayStepOutput(many=True)

    @extend_schema(
        parameters=[game_id_parameter()],
        responses={
            200: OutputSerializer,
            **error_responses(
                404,
                409,
                429,
                codes={
                    **NO_SUCH_GAME,
                    403: REPLAY_LOCKED,
                    409: "`rules_version_unsupported`: played under rules this server lacks.",
                },
            ),
        },
    )
    def get(self, request: Request, game_id: int) -> HttpResponse:
        game, private = selectors.game_get_unlocked(game_id=game_id, viewer=request.user)
        # Built once, away from this process, and kept (gzipped JSON): a read
        # of a kept replay costs a cache read, whatever its length.
        body = replays.game_replay_gzipped(game=game, requester=Requester.of(request))
        return _replay_response(request, body, private=private)


def _replay_response(request: Request, body: bytes, *, private: bool) -> HttpResponse:
    """A gzipped replay body, sent gzipped to the clients that accept it."""
    if ACCEPTS_GZIP.search(request.META.get("HTTP_ACCEPT_ENCODING", "")):
        response = HttpResponse(body, content_type="application/json")
        response["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(gzip.decompress(body), content_type="application/json")
    response["Vary"] = "Accept-Encoding"
    if private:
        # Served to this viewer only: a shared cache must not hand it to one
        # who has not played the day yet.
        response["Cache-Control"] = "private, no-store"
    else:
        # A stored game never changes its log, so proxies and browsers may keep
        # the replay (a 20,000-action replay costs about a second to build).
        response["Cache-Control"] = "public, max-age=86400"
    return response


class ParReplayApi(APIView):
    """Every table of a closed day's par line (the solver's win), as a game's replay
    (`game` null). Locked for everyone while the day runs: it is the day's answer."""

    renderer_classes = [JSONRenderer]
    content_negotiation_class = JsonWhateverTheAccept
    throttle_scope = "replay"

    @extend_schema(
        parameters=[day_parameter()],
        responses={
            200: GameReplayApi.OutputSerializer,
            **error_responses(
                403,
                404,
                429,
                codes={
                    403: "`replay_locked`: the day has not closed yet (`opens_at`).",
                    404: f"{DAY_NOT_FOUND}; `no_par`: the solver found no line that day.",
                },
            ),
        },
    )
    def get(self, request: Request, date: str) -> HttpResponse:
        daily = selectors.par_get_unlocked(date=parse_day(date))
        return _replay_response(
            request,
            replays.par_replay_gzipped(daily=daily, requester=Requester.of(request)),
            private=False,
        )


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
    version = serializers.IntegerField(
        help_text="0 when started, one more with each save that changed the log: a save "
        "names the version it extends."
    )
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


ATTEMPT_REFUSALS = {
    400: "`illegal_action` (index, token, reason, reason_code, params): the saved log is refused.",
    403: "`player_banned`: the account may no longer play ranked games.",
    404: "`no_attempt` (none started), or the day is not served or not prepared.",
    409: "`day_closed` (only today's attempt can be started or saved), `attempt_closed`, or "
    "`stale_save` (log, version, actions: the stored game): the save names another version "
    "than the stored one, or names none and does not extend the saved log.",
}


class DailyAttemptApi(APIView):
    """The signed-in player's one ranked attempt at a day's deal.

    `POST` starts it (today only): 201 the first time, then 200 with the same
    attempt, from any device. The server's clock starts then. `GET` reads it
    (404 `no_attempt` before it is started). `PATCH` saves the game so far,
    validated like a submission (a refused log is a 400 `illegal_action` and
    saves nothing). Submitting today's deal to `POST /api/games/` closes it.

    A save names the attempt `version` it extends (from the last answer): a
    device that fell behind another gets a 409 `stale_save` with the stored
    game instead of writing over it. Without a version, a save must extend the
    saved log. The log already saved, sent again, is answered as it stands.
    """

    permission_classes = [IsAuthenticated]
    throttle_scope = "submit"

    @extend_schema_serializer(component_name="AttemptSave")
    class SaveInputSerializer(serializers.Serializer):
        log = LogField(help_text="The whole game so far (required), as text or a list of tokens.")
        version = serializers.IntegerField(
            required=False,
            min_value=0,
            help_text="The attempt's version this game extends (the `version` of the last "
            "answer). Another version than the stored one is a 409 `stale_save`; without "
            "it, the log must extend the saved one.",
        )

    @extend_schema(
        operation_id="daily_attempt_read",
        parameters=[day_parameter()],
        responses={200: AttemptOutput, **error_responses(404, codes=ATTEMPT_REFUSALS)},
    )
    def get(self, request: Request, date: str) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        attempt = selectors.attempt_get(player=request.user, date=parse_day(date))
        return Response(AttemptOutput(attempt).data)

    @extend_schema(
        operation_id="daily_attempt_start",
        request=None,
        parameters=[day_parameter()],
        responses={
            201: AttemptOutput,
            200: AttemptOutput,
            **error_responses(*BODY_REFUSALS, 404, 409, 429, codes=ATTEMPT_REFUSALS),
        },
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
        parameters=[day_parameter()],
        responses={
            200: AttemptOutput,
            **error_responses(*BODY_REFUSALS, 404, 409, 429, codes=ATTEMPT_REFUSALS),
        },
    )
    def patch(self, request: Request, date: str) -> Response:
        data = self.SaveInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        attempt = services.attempt_save(
            player=request.user,
            date=parse_day(date),
            log=data.validated_data["log"],
            version=data.validated_data.get("version"),
        )
        return Response(AttemptOutput(attempt).data)


# --- Export --------------------------------------------------------------------------


class ExportApi(APIView):
    """Download every game of the signed-in player as one JSON file."""

    permission_classes = [IsAuthenticated]

    @extend_schema_serializer(component_name="GamesExport")
    class OutputSerializer(serializers.Serializer):
        @extend_schema_serializer(component_name="ExportedGame")
        class GameSerializer(serializers.Serializer):
            id = serializers.IntegerField()
            deal = serializers.CharField()
            deal_number = serializers.IntegerField()
            ranked = serializers.BooleanField(help_text="The player's ranked game of its day.")
            assisted = serializers.BooleanField(help_text="Hints were asked during its attempt.")
            duration_ms = serializers.IntegerField(
                allow_null=True, help_text="Server-measured, ranked games only."
            )
            times = serializers.ListField(
                child=serializers.FloatField(), allow_null=True, help_text="Per-action times."
            )
            daily = serializers.DateField(allow_null=True, help_text="The day it counted for.")
            log = serializers.CharField()
            actions = serializers.IntegerField()
            score = serializers.IntegerField()
            moves = serializers.IntegerField()
            won = serializers.BooleanField()
            rules_version = serializers.CharField()
            submitted_at = serializers.DateTimeField()
            voided_at = serializers.DateTimeField(allow_null=True)
            void_reason = serializers.CharField()
            replay = serializers.URLField()

        player = serializers.CharField()
        exported_at = serializers.DateTimeField()
        games = GameSerializer(many=True)

    @extend_schema(
        operation_id="auth_export", responses={200: OutputSerializer, **error_responses(429)}
    )
    def get(self, request: Request) -> Response:
        assert request.user.is_authenticated  # permission_classes: IsAuthenticated
        games = selectors.player_games_export(player=request.user)
        for game in games:
            game["replay"] = game_url(Game(pk=game["id"]))
        now = timezone.now()
        body = {"player": request.user.get_username(), "exported_at": now, "games": games}
        filename = f"easyharp-{request.user.pk}-{now:%Y-%m-%d}.json"
        return Response(body, headers={"Content-Disposition": f'attachment; filename="{filename}"'})
