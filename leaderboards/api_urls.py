"""Routes of the leaderboards API (included under api/)."""

from django.urls import path

from leaderboards import api

urlpatterns = [
    path("daily/<str:date>/leaderboard/", api.LeaderboardApi.as_view(), name="api-leaderboard"),
    path("daily/<str:date>/results/", api.DayResultsApi.as_view(), name="api-day-results"),
    path("days/", api.DaysApi.as_view(), name="api-days"),
    path("games/<int:game_id>/share/", api.GameShareApi.as_view(), name="api-game-share"),
    path("players/<str:username>/", api.PlayerApi.as_view(), name="api-player"),
    path("players/<str:username>/stats/", api.PlayerStatsApi.as_view(), name="api-player-stats"),
    path("players/<str:username>/badges/", api.PlayerBadgesApi.as_view(), name="api-player-badges"),
]
