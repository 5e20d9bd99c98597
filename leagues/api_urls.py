"""Routes of the friends, leagues and standings API (included under api/)."""

from django.urls import path

from leagues import api

urlpatterns = [
    path("players/", api.PlayerSearchApi.as_view(), name="api-player-search"),
    path("players/<str:username>/follow/", api.FollowApi.as_view(), name="api-follow"),
    path("following/", api.FollowingApi.as_view(), name="api-following"),
    path("leagues/", api.LeaguesApi.as_view(), name="api-leagues"),
    path("leagues/join/", api.LeagueJoinApi.as_view(), name="api-league-join"),
    path("leagues/<str:slug>/", api.LeagueApi.as_view(), name="api-league"),
    path("leagues/<str:slug>/leave/", api.LeagueLeaveApi.as_view(), name="api-league-leave"),
    path("leagues/<str:slug>/invite/", api.LeagueInviteApi.as_view(), name="api-league-invite"),
    path(
        "leagues/<str:slug>/members/<str:username>/",
        api.LeagueMemberApi.as_view(),
        name="api-league-member",
    ),
    path(
        "leagues/<str:slug>/daily/<str:date>/leaderboard/",
        api.LeagueBoardApi.as_view(),
        name="api-league-leaderboard",
    ),
    path(
        "leagues/<str:slug>/standings/",
        api.LeagueStandingsApi.as_view(),
        name="api-league-standings",
    ),
    path("standings/", api.StandingsApi.as_view(), name="api-standings"),
]
