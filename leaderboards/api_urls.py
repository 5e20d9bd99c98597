"""Routes of the leaderboards API (included under api/)."""

from django.urls import URLPattern, path

from leaderboards import api
from leaderboards.audiences import Members


def board_api_urls(*, friends: Members | None = None) -> list[URLPattern]:
    """The API's board routes; `scope=friends` narrows a board to `friends` (the site's
    wiring passes the leagues' read; without it the scope is refused)."""
    return [
        path(
            "daily/<str:date>/leaderboard/",
            api.LeaderboardApi.as_view(friends=friends),
            name="api-leaderboard",
        ),
        path("daily/<str:date>/results/", api.DayResultsApi.as_view(), name="api-day-results"),
        path("days/", api.DaysApi.as_view(), name="api-days"),
        path("games/<int:game_id>/share/", api.GameShareApi.as_view(), name="api-game-share"),
        path("players/<str:username>/", api.PlayerApi.as_view(), name="api-player"),
        path(
            "players/<str:username>/stats/", api.PlayerStatsApi.as_view(), name="api-player-stats"
        ),
        path(
            "players/<str:username>/badges/",
            api.PlayerBadgesApi.as_view(),
            name="api-player-badges",
        ),
    ]
