"""Routes of the friends', leagues' and standings' pages (the API has its own, in `api_urls`)."""

from django.urls import path

from leagues import web

urlpatterns = [
    path("friends/", web.friends, name="friends"),
    path("friends/<str:action>/", web.friend_action, name="friend-action"),
    path("leagues/", web.league_list, name="leagues"),
    path("leagues/join/", web.league_join_form, name="league-join"),
    path("leagues/join/<str:code>/", web.league_invite, name="league-invite"),
    path("leagues/<str:slug>/", web.league, name="league"),
    path("leagues/<str:slug>/<str:action>/", web.league_action, name="league-action"),
    path("standings/", web.standings, name="standings"),
]
