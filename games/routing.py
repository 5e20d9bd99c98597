"""Websocket routes of the games app."""

from django.urls import re_path

from games.consumers import AttemptConsumer
from games.watch import AttemptWatchConsumer

websocket_urlpatterns = [
    # Any text as the date: a bad one gets the consumer's clear close code, not a 404.
    re_path(r"^ws/daily/(?P<date>[^/]+)/attempt/$", AttemptConsumer.as_asgi()),
    re_path(
        r"^ws/daily/(?P<date>[^/]+)/players/(?P<username>[^/]+)/attempt/$",
        AttemptWatchConsumer.as_asgi(),
    ),
]
