"""Routes of the leaderboards API (included under api/)."""

from django.urls import path

from leaderboards import api

urlpatterns = [
    path("daily/<str:date>/leaderboard/", api.LeaderboardApi.as_view(), name="api-leaderboard"),
    path("players/<str:username>/", api.PlayerApi.as_view(), name="api-player"),
]
