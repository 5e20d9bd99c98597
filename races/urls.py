"""Routes of the races' pages (the API has its own, in `api_urls`)."""

from django.urls import path

from races import web

urlpatterns = [
    path("races/", web.races_page, name="races"),
    path("races/players/<str:username>/", web.player_races_page, name="player-races"),
    path("races/<str:code>/", web.race_page, name="race"),
    path("races/<str:code>/<str:action>/", web.race_action, name="race-action"),
]
