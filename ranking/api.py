"""The doors of `ranking.actions` in the REST API: submitting a game, deleting an account."""

from __future__ import annotations

from django.contrib.auth import logout
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from easyharp_site.accounts.api import PasswordField, signed_in
from easyharp_site.devices import address_digest, device_id
from easyharp_site.errors import BODY_REFUSALS, ServiceError, error_responses
from easyharp_site.fields import StrictBooleanField
from easyharp_site.parsers import SafeJSONParser
from easyharp_site.throttling import client_address
from games import selectors as game_selectors
from games import services as game_services
from games.api import HINT_RESULTS, DealCodeField, GameOutput, LogField, TimesField
from games.parsing import deal_parse
from games.pool import Requester
from races.selectors import race_deal_hold
from ranking import actions

IDEMPOTENCY_KEY_MAX = 255


class GameCreateApi(APIView):
    """Submit a game: the server replays the log and stores what it computed.

    With an `Idempotency-Key` header, a retry with the same key, deal and log
    returns the game stored the first time with 200 (the first answer is 201);
    the same key with another deal or log is a 409 `idempotency_key_reused`.

    A game of today's deal by a player whose ranked attempt of today is open
    is their ranked game (`ranked` true) and closes the attempt, won or not,
    unless it says `practice`; every other game is practice, and the ranked
    game that follows a practice game of the day is compared with it (the
    `rehearsed` flag). `times` (optional) are the per-action times.
    """

    permission_classes = [IsAuthenticated]
    throttle_scope = "submit"
    # JSON only: a form's "true" would pass for the boolean the schema asks for.
    parser_classes = [SafeJSONParser]

    @extend_schema_serializer(component_name="GameSubmission")
    class InputSerializer(serializers.Serializer):
        deal = DealCodeField()
        log = LogField()
        times = TimesField(required=False)
        practice = StrictBooleanField(
            required=False,
            default=False,
            help_text="True: store the game as practice even while the player's ranked attempt "
            "is open or not started (a game begun before the attempt's clock started, offline "
            "for example); the attempt stays open, and the ranked game that follows is "
            "compared with this one.",
        )

    @extend_schema(
        request=InputSerializer,
        parameters=[
            OpenApiParameter(
                "Idempotency-Key",
                {"type": "string", "minLength": 1, "maxLength": IDEMPOTENCY_KEY_MAX},
                OpenApiParameter.HEADER,
                description=f"Any text of 1 to {IDEMPOTENCY_KEY_MAX} characters, unique per "
                "game for this player.",
            )
        ],
        responses={
            201: GameOutput,
            200: GameOutput,
            **error_responses(
                *BODY_REFUSALS,
                409,
                429,
                codes={
                    400: "`invalid_deal`, `empty_log`, `log_too_long`, `illegal_action` (a log "
                    "the rules refuse, with `index`, `token`, `reason`, `reason_code` and "
                    "`params`), `invalid_idempotency_key`.",
                    409: "`idempotency_key_reused`: the key was used for another deal or log.",
                    429: "`too_many_games`, `too_many_actions` (with `limit` and `wait`): a "
                    "practice game past the player's ceilings of the UTC day "
                    "(`PLAYER_GAMES_PER_DAY`, `PLAYER_ACTIONS_PER_DAY`), until midnight; the "
                    "ranked game of the day is never refused.",
                },
            ),
        },
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
        game, created = actions.game_submit(
            player=request.user,
            idempotency_key=key,
            device=device_id(request),
            address=address_digest(client_address(request)),
            **data.validated_data,
        )
        output = GameOutput(game, context={"request": request})
        return Response(output.data, status=status.HTTP_201_CREATED if created else 200)


class PasswordInput(serializers.Serializer):
    password = PasswordField()


class AccountDeleteApi(APIView):
    """Delete the account, confirmed with the password.

    The player's games leave every board at once; their replays stay, under an
    anonymous name. The username is reserved for a while, then free.
    """

    permission_classes = [IsAuthenticated]
    throttle_scope = "auth"

    @extend_schema(
        request=PasswordInput, responses={204: None, **error_responses(*BODY_REFUSALS, 429)}
    )
    def post(self, request: Request) -> Response:
        data = PasswordInput(data=request.data)
        data.is_valid(raise_exception=True)
        actions.player_delete(player=signed_in(request), password=data.validated_data["password"])
        logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- Hints -------------------------------------------------------------------------


class HintApi(APIView):
    """The next action of a win from a position, or that there is none, or that the work ran out.

    The solver's work is fixed, so the same position always gets the same
    answer; `cut_short` is true when the time cap stopped it first. A hint on
    today's deal asked by a signed-in player whose ranked attempt is open marks
    that attempt assisted (`assisted` true): its game is stored and shown with
    the mark, and ranked on no board. Until the day closes, nobody else gets
    hints on its deal but the players who have finished their ranked game
    (403 `replay_locked`); and while a race plays a deal, nobody gets hints on
    it (403 `race_running`, `races.selectors.race_deal_hold`).

    It is ranking's door, not the games': a hint changes what ranks (the open
    attempt it marks leaves the boards), and the deals it holds back are the
    day's and the races'.
    """

    throttle_scope = "hint"  # each request may cost seconds of solver time

    @extend_schema_serializer(component_name="HintRequest")
    class InputSerializer(serializers.Serializer):
        deal = DealCodeField()
        log = LogField(required=False, default="")

    @extend_schema_serializer(component_name="Hint")
    class OutputSerializer(serializers.Serializer):
        result = serializers.ChoiceField(choices=HINT_RESULTS)
        action = serializers.CharField(allow_null=True)
        moves_to_win = serializers.IntegerField(allow_null=True)
        seconds = serializers.FloatField()
        cut_short = serializers.BooleanField()
        assisted = serializers.BooleanField(
            default=False,
            help_text="This hint counted against the player's open ranked attempt of today.",
        )

    @extend_schema(
        request=InputSerializer,
        responses={
            200: OutputSerializer,
            **error_responses(
                *BODY_REFUSALS,
                429,
                codes={
                    400: "`invalid_deal`, `log_too_long`, `illegal_action`.",
                    403: "`replay_locked` (with `date` and `opens_at`): the deal is that of a "
                    "day still running, and the player has neither an open ranked attempt of "
                    "it (a hint marks it assisted) nor a finished one. `race_running`: a race "
                    "plays the deal now. The deal of a day prepared ahead is refused as "
                    "`replay_locked` without `date` or `opens_at`.",
                },
            ),
        },
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        # Before any solver work: a hint on a running day's deal is its answer.
        lock = game_selectors.hint_lock(deal=data.validated_data["deal"], viewer=request.user)
        if lock is not None:
            raise lock.error("This hint")
        held = race_deal_hold(deal_parse(data.validated_data["deal"]).number)
        if held is not None:
            raise held
        answer = game_selectors.game_hint(**data.validated_data, requester=Requester.of(request))
        output = self.OutputSerializer(answer).data
        if request.user.is_authenticated:
            output["assisted"] = game_services.attempt_assist(
                player=request.user, deal=data.validated_data["deal"]
            )
        return Response(output)
