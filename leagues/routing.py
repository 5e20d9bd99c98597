"""Websocket routes of the leagues app."""

from django.urls import re_path

from leagues.consumers import LeagueBoardConsumer

websocket_urlpatterns = [
    re_path(
        r"^ws/leagues/(?P<slug>[^/]+)/daily/(?P<date>[^/]+)/leaderboard/$",
        LeagueBoardConsumer.as_asgi(),
    ),
]
