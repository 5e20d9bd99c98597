"""Routes of the board pages (the API has its own, in `api_urls`)."""

from django.urls import path

from leaderboards import web

urlpatterns = [
    path("", web.home, name="home"),
    path("leaderboard/", web.leaderboard, name="leaderboard"),
    path("leaderboard/<str:date>/", web.leaderboard, name="leaderboard-day"),
    path("players/<str:username>/", web.player, name="player"),
]
