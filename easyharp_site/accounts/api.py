"""The accounts API under `/api/auth/`: sign up, API tokens, browser sessions."""

from __future__ import annotations

from django.contrib.auth import login, logout
from django.contrib.auth.validators import UnicodeUsernameValidator
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from easyharp_site.accounts import services


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
