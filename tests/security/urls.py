"""Small views used by the guard tests: they exercise the site-wide middleware,
parser and throttle settings without depending on any particular API view."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.urls import path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView


class EchoView(APIView):
    """Echoes the parsed JSON body; writes are limited under the `submit` scope."""

    throttle_scope = "submit"

    def get(self, request: Request) -> Response:
        return Response({"ok": True})

    def post(self, request: Request) -> Response:
        return Response({"received": type(request.data).__name__})


class SignupLikeView(APIView):
    throttle_scope = "signup"

    def post(self, request: Request) -> Response:
        return Response({"ok": True}, status=201)


class CountPlayersView(APIView):
    """Touches the database, so a lost connection surfaces here."""

    def get(self, request: Request) -> Response:
        return Response({"players": get_user_model().objects.count()})


urlpatterns = [
    path("api/echo/", EchoView.as_view()),
    path("api/signup-like/", SignupLikeView.as_view()),
    path("api/players-count/", CountPlayersView.as_view()),
]
