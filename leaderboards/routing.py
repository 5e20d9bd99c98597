"""Websocket routes of the leaderboards app."""

from django.urls import re_path

from leaderboards.consumers import LeaderboardConsumer

websocket_urlpatterns = [
    # Any text as the date: a bad one gets the consumer's clear close code, not a 404.
    re_path(r"^ws/daily/(?P<date>[^/]+)/leaderboard/$", LeaderboardConsumer.as_asgi()),
]
