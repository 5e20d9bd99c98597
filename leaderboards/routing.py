"""Websocket routes of the leaderboards app."""

from django.urls import URLPattern, re_path

from leaderboards.audiences import Members
from leaderboards.consumers import LeaderboardConsumer


def board_websocket_urls(*, friends: Members | None = None) -> list[URLPattern]:
    """The live board's route; `scope=friends` narrows it to `friends` (the site's
    wiring passes the leagues' read; without it the scope is refused)."""
    return [
        # Any text as the date: a bad one gets the consumer's clear close code, not a 404.
        re_path(
            r"^ws/daily/(?P<date>[^/]+)/leaderboard/$",
            LeaderboardConsumer.as_asgi(friends=friends),
        ),
    ]
