"""The accounts API under `/api/auth/`: sign up, API tokens, browser sessions."""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth import login, logout
from django.contrib.auth.validators import UnicodeUsernameValidator
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from easyharp_site.accounts import services
from easyharp_site.errors import BODY_REFUSALS, error_responses

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
class PasswordField(serializers.CharField):
    """A password as typed: blanks kept, 1 to 128 characters, any but NUL."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_length=PASSWORD_MAX, trim_whitespace=False, **kwargs)


@extend_schema_serializer(component_name="Credentials")
class CredentialsInput(serializers.Serializer):
    username = serializers.CharField(
        max_length=USERNAME_MAX, validators=[UnicodeUsernameValidator()]
    )
    password = PasswordField()


CREDENTIAL_REFUSALS = {401: "`invalid_credentials`: unknown username or wrong password."}


class RegisterApi(APIView):
    """Sign up: create a player and return their API token."""

    throttle_scope = "signup"

    @extend_schema_serializer(component_name="Registered")
    class OutputSerializer(serializers.Serializer):
        username = serializers.CharField()
        token = serializers.CharField()

    @extend_schema(
        request=CredentialsInput,
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
        data = CredentialsInput(data=request.data)
        data.is_valid(raise_exception=True)
        player, token = services.player_register(**data.validated_data)
        output = self.OutputSerializer({"username": player.get_username(), "token": token})
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
