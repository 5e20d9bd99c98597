"""The accounts API under `/api/auth/`: sign up, API tokens, browser sessions, e-mail,
passwords, signing out everywhere and deleting the account."""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
from django.contrib.auth import SESSION_KEY, login, logout, update_session_auth_hash
from django.contrib.auth.models import User
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.utils.translation import get_language
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from easyharp_site.accounts import (
    emails,
    passwords,
    reminders,
    selectors,
    services,
    sessions,
)
from easyharp_site.accounts.links import email_verify_link, reset_link
from easyharp_site.devices import device_remember
from easyharp_site.errors import BODY_REFUSALS, ServiceError, error_responses
from easyharp_site.fields import StrictBooleanField, StrictIntegerField, TextField
from easyharp_site.parsers import SafeJSONParser

USERNAME_MAX = 150  # the user model's username length
PASSWORD_MAX = 128


def username_schema() -> dict[str, Any]:
    """A username in the OpenAPI schema: what `UnicodeUsernameValidator` admits."""
    # The validator ends its pattern with Python's `\Z`; the schema's regexes write `$`.
    pattern = re.compile(UnicodeUsernameValidator.regex).pattern.replace("\\Z", "$")
    return {"type": "string", "pattern": pattern, "minLength": 1, "maxLength": USERNAME_MAX}


@extend_schema_field(
    # DRF's text fields refuse an empty value and a NUL character: the schema says so.
    {"type": "string", "minLength": 1, "maxLength": PASSWORD_MAX, "pattern": "^[^\\x00]*$"}
)
class PasswordField(TextField):
    """A password as typed: blanks kept, 1 to 128 characters, any but NUL."""

    def __init__(self, **kwargs: Any) -> None:
        # Blanks are a password's characters like any other: no NOT_BLANK.
        super().__init__(max_length=PASSWORD_MAX, trim_whitespace=False, validators=[], **kwargs)


@extend_schema_serializer(component_name="Credentials")
class CredentialsInput(serializers.Serializer):
    username = TextField(max_length=USERNAME_MAX, validators=[UnicodeUsernameValidator()])
    password = PasswordField()


CREDENTIAL_REFUSALS = {401: "`invalid_credentials`: unknown username or wrong password."}


@extend_schema_serializer(component_name="Registration")
class RegisterInput(CredentialsInput):
    email = TextField(
        max_length=254,
        required=False,
        allow_blank=True,
        help_text="Optional; used for nothing until the link mailed to it is opened.",
    )


class RegisterApi(APIView):
    """Sign up: create a player and return their API token.

    With an `email`, a link that confirms it is mailed to it.
    """

    throttle_scope = "signup"

    @extend_schema_serializer(component_name="Registered")
    class OutputSerializer(serializers.Serializer):
        username = serializers.CharField()
        token = serializers.CharField()
        email_pending = serializers.EmailField(allow_null=True)

    @extend_schema(
        request=RegisterInput,
        responses={
            201: OutputSerializer,
            **error_responses(
                *BODY_REFUSALS,
                409,
                429,
                codes={
                    400: "`invalid_password` (with `problems`): a password the site's "
                    "password rules refuse (too short, too common, all digits, too like "
                    "the username).",
                    409: "`username_taken`: the name, compared without case, is taken.",
                },
            ),
        },
    )
    def post(self, request: Request) -> Response:
        data = RegisterInput(data=request.data)
        data.is_valid(raise_exception=True)
        email = data.validated_data.pop("email", "")
        if email:
            # A bad address refuses the sign-up before any player exists.
            email = emails.email_normalize(email)
        player, token = services.player_register(**data.validated_data)
        pending = None
        if email:
            try:
                pending = emails.email_change_request(
                    player=player, email=email, link=email_verify_link
                )
            except ServiceError:
                # The mail queue is full: the player exists, without a pending
                # address (the account page offers to add one later).
                pending = None
        output = self.OutputSerializer(
            {"username": player.get_username(), "token": token, "email_pending": pending}
        )
        return Response(output.data, status=status.HTTP_201_CREATED)


class TokenApi(APIView):
    """Exchange a username and password for the player's API token."""

    throttle_scope = "auth"

    @extend_schema_serializer(component_name="Token")
    class OutputSerializer(serializers.Serializer):
        token = serializers.CharField()

    @extend_schema(
        request=CredentialsInput,
        responses={
            200: OutputSerializer,
            **error_responses(*BODY_REFUSALS, 429, codes=CREDENTIAL_REFUSALS),
        },
    )
    def post(self, request: Request) -> Response:
        data = CredentialsInput(data=request.data)
        data.is_valid(raise_exception=True)
        token = services.player_token_get_or_create(**data.validated_data)
        # A client that keeps cookies is a known device of the player from now on.
        device_remember(request._request, data.validated_data["username"])
        return Response(self.OutputSerializer({"token": token}).data)


class LoginApi(APIView):
    """Log in with a session cookie (for the browser); CSRF-protected like every session write."""

    throttle_scope = "auth"
    authentication_classes: list[type] = []

    @extend_schema_serializer(component_name="LoggedIn")
    class OutputSerializer(serializers.Serializer):
        username = serializers.CharField()

    @extend_schema(
        request=CredentialsInput,
        responses={
            200: OutputSerializer,
            **error_responses(*BODY_REFUSALS, 429, codes=CREDENTIAL_REFUSALS),
        },
    )
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

    @extend_schema(request=None, responses={204: None, **error_responses(403, 413)})
    def post(self, request: Request) -> Response:
        logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- E-mail, passwords, sessions, deletion -------------------------------------------
#
# The links that mails carry open the site's pages (`web`); a client that
# handles them itself posts what the link holds: `token` of /accounts/email/
# verify/<token>/, or `uid` and `token` of /accounts/reset/<uid>/<token>/.

RESET_SENT = (
    "If a player has confirmed this address, a link to choose a new password is on its way "
    "to it. The link works once. No mail within ten minutes? Check the address (and the spam "
    "folder) and ask again."
)


class AccountOutput(serializers.Serializer):
    username = serializers.CharField()
    email = serializers.EmailField(allow_null=True, help_text="The confirmed address.")
    email_pending = serializers.EmailField(
        allow_null=True, help_text="An address waiting for its confirming link."
    )
    email_delivery_failed = serializers.BooleanField(
        help_text="The last confirming link could not be sent: ask again."
    )


def signed_in(request: Request) -> User:
    user = request.user
    assert isinstance(user, User)  # permission_classes: IsAuthenticated
    return user


def _account(player: User) -> dict[str, Any]:
    return AccountOutput(selectors.account_view(player=player)).data


class AccountApi(APIView):
    """The signed-in player's own account."""

    permission_classes = [IsAuthenticated]

    @extend_schema(operation_id="auth_me", responses={200: AccountOutput, **error_responses()})
    def get(self, request: Request) -> Response:
        return Response(_account(signed_in(request)))


@extend_schema_serializer(component_name="GameSettings")
class SettingsSerializer(serializers.Serializer):
    doubleClick = StrictBooleanField(  # noqa: N815 - the browser's own names
        required=False, help_text="A double tap finds a card a column (off: a tap answers at once)."
    )
    fourColour = StrictBooleanField(  # noqa: N815
        required=False, help_text="Diamonds blue and clubs green."
    )
    cardStyle = serializers.ChoiceField(  # noqa: N815
        choices=["classic", "large"], required=False, help_text="Large card corners or classic."
    )


class SettingsApi(APIView):
    """The player's game settings, kept with the account so they follow them to any browser."""

    permission_classes = [IsAuthenticated]
    # JSON only: a form's "0" or "on" would pass for a boolean the schema calls true/false.
    parser_classes = [SafeJSONParser]

    @extend_schema(
        operation_id="auth_settings", responses={200: SettingsSerializer, **error_responses()}
    )
    def get(self, request: Request) -> Response:
        return Response(selectors.account_settings(player=signed_in(request)))

    @extend_schema(
        operation_id="auth_settings_update",
        request=SettingsSerializer,
        responses={200: SettingsSerializer, **error_responses(*BODY_REFUSALS)},
    )
    def patch(self, request: Request) -> Response:
        data = SettingsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        kept = services.account_settings_update(
            player=signed_in(request), settings=dict(data.validated_data)
        )
        return Response(kept)


@extend_schema_serializer(component_name="Reminder")
class ReminderSerializer(serializers.Serializer):
    hour = StrictIntegerField(
        min_value=0,
        max_value=23,
        allow_null=True,
        help_text="The UTC hour of the reminder mail on the days the player has not played "
        "yet; null: no reminders.",
    )
    language = serializers.ChoiceField(
        choices=[code for code, _name in settings.LANGUAGES],
        required=False,
        help_text="The language of the mail (by default the request's).",
    )


@extend_schema_serializer(component_name="ReminderState")
class ReminderOutput(serializers.Serializer):
    hour = serializers.IntegerField(
        allow_null=True, help_text="The UTC hour of the reminder mail; null: no reminders."
    )
    language = serializers.CharField(
        help_text="The language of the mail; empty until reminders were first asked for."
    )
    email = serializers.EmailField(
        allow_null=True,
        help_text="Where reminders go: the confirmed address (null: none is sent until "
        "there is one).",
    )


class ReminderApi(APIView):
    """The player's daily reminder: an e-mail at an hour of their choice on the days they
    have not played yet. A reminder set after its hour has come today starts tomorrow."""

    permission_classes = [IsAuthenticated]
    parser_classes = [SafeJSONParser]

    @extend_schema(
        operation_id="auth_reminder", responses={200: ReminderOutput, **error_responses()}
    )
    def get(self, request: Request) -> Response:
        return Response(ReminderOutput(selectors.reminder_view(player=signed_in(request))).data)

    @extend_schema(
        operation_id="auth_reminder_update",
        request=ReminderSerializer,
        responses={200: ReminderOutput, **error_responses(*BODY_REFUSALS)},
    )
    def put(self, request: Request) -> Response:
        data = ReminderSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        player = signed_in(request)
        reminders.reminder_set(
            player=player,
            hour=data.validated_data["hour"],
            language=data.validated_data.get("language") or get_language(),
        )
        return Response(ReminderOutput(selectors.reminder_view(player=player)).data)


class EmailInput(serializers.Serializer):
    email = TextField(max_length=emails.EMAIL_MAX_LENGTH)


class EmailApi(APIView):
    """Add or change the player's e-mail address (a link confirms it), or remove it."""

    permission_classes = [IsAuthenticated]
    throttle_scope = "email"

    @extend_schema(
        request=EmailInput, responses={202: AccountOutput, **error_responses(*BODY_REFUSALS, 429)}
    )
    def post(self, request: Request) -> Response:
        data = EmailInput(data=request.data)
        data.is_valid(raise_exception=True)
        emails.email_change_request(
            player=signed_in(request),
            email=data.validated_data["email"],
            link=email_verify_link,
        )
        return Response(_account(signed_in(request)), status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        request=None, responses={200: AccountOutput, **error_responses(*BODY_REFUSALS, 429)}
    )
    def delete(self, request: Request) -> Response:
        emails.email_remove(player=signed_in(request))
        return Response(_account(signed_in(request)))


class TokenInput(serializers.Serializer):
    token = TextField(max_length=500)


class EmailVerifyApi(APIView):
    """Confirm an e-mail address with the token of its link (works once)."""

    throttle_scope = "auth"
    authentication_classes: list[type] = []

    @extend_schema_serializer(component_name="EmailConfirmed")
    class OutputSerializer(serializers.Serializer):
        username = serializers.CharField()
        email = serializers.EmailField()

    @extend_schema(
        request=TokenInput,
        responses={200: OutputSerializer, **error_responses(*BODY_REFUSALS, 429)},
    )
    def post(self, request: Request) -> Response:
        data = TokenInput(data=request.data)
        data.is_valid(raise_exception=True)
        player = emails.email_verify(token=data.validated_data["token"])
        output = {"username": player.get_username(), "email": player.email}
        return Response(self.OutputSerializer(output).data)


class DetailOutput(serializers.Serializer):
    detail = serializers.CharField()


class PasswordResetApi(APIView):
    """Ask for a password reset link by e-mail. The answer is the same for every address."""

    throttle_scope = "reset"
    authentication_classes: list[type] = []

    @extend_schema(
        request=EmailInput, responses={202: DetailOutput, **error_responses(*BODY_REFUSALS, 429)}
    )
    def post(self, request: Request) -> Response:
        data = EmailInput(data=request.data)
        data.is_valid(raise_exception=True)
        passwords.password_reset_request(email=data.validated_data["email"], link=reset_link)
        return Response({"detail": RESET_SENT}, status=status.HTTP_202_ACCEPTED)


class PasswordResetConfirmInput(serializers.Serializer):
    uid = TextField(max_length=64)
    token = TextField(max_length=100)
    password = PasswordField()


class NewTokenOutput(serializers.Serializer):
    username = serializers.CharField()
    token = serializers.CharField(help_text="The player's new API token; the old one is revoked.")


class PasswordResetConfirmApi(APIView):
    """Choose a new password with a reset link's `uid` and `token` (works once).

    Every session of the player ends and their API token is replaced.
    """

    throttle_scope = "auth"
    authentication_classes: list[type] = []

    @extend_schema(
        request=PasswordResetConfirmInput,
        responses={200: NewTokenOutput, **error_responses(*BODY_REFUSALS, 429)},
    )
    def post(self, request: Request) -> Response:
        data = PasswordResetConfirmInput(data=request.data)
        data.is_valid(raise_exception=True)
        player, token = passwords.password_reset_complete(**data.validated_data)
        return Response(NewTokenOutput({"username": player.get_username(), "token": token}).data)


class PasswordChangeInput(serializers.Serializer):
    current_password = PasswordField()
    new_password = PasswordField()


class PasswordChangeApi(APIView):
    """Change the password. Every other session ends and the API token is replaced."""

    permission_classes = [IsAuthenticated]
    throttle_scope = "auth"

    @extend_schema(
        request=PasswordChangeInput,
        responses={200: NewTokenOutput, **error_responses(*BODY_REFUSALS, 429)},
    )
    def post(self, request: Request) -> Response:
        data = PasswordChangeInput(data=request.data)
        data.is_valid(raise_exception=True)
        player = signed_in(request)
        token = passwords.password_change(player=player, **data.validated_data)
        if SESSION_KEY in request._request.session:
            # This browser stays signed in; Django signs the others out.
            update_session_auth_hash(request._request, player)
        return Response(NewTokenOutput({"username": player.get_username(), "token": token}).data)


class TokenRotateApi(APIView):
    """Replace the player's API token: the old one stops working at once."""

    permission_classes = [IsAuthenticated]
    throttle_scope = "auth"

    @extend_schema(
        request=None, responses={200: NewTokenOutput, **error_responses(*BODY_REFUSALS, 429)}
    )
    def post(self, request: Request) -> Response:
        token = sessions.token_replace(player=signed_in(request))
        return Response(
            NewTokenOutput({"username": signed_in(request).get_username(), "token": token}).data
        )


class LogoutEverywhereApi(APIView):
    """Sign out everywhere: every session of the player ends and the API token is revoked."""

    permission_classes = [IsAuthenticated]
    throttle_scope = "auth"

    @extend_schema(request=None, responses={204: None, **error_responses(*BODY_REFUSALS, 429)})
    def post(self, request: Request) -> Response:
        sessions.sessions_end_everywhere(player=signed_in(request))
        logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)
