"""Websocket routes of the races app."""

from django.urls import re_path

from races.consumers import RaceConsumer

websocket_urlpatterns = [
    # Any text as the code: an unknown one gets the consumer's clear close code, not a 404.
    re_path(r"^ws/races/(?P<code>[^/]+)/$", RaceConsumer.as_asgi()),
]
