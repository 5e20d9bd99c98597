"""Routes of the games API (included under api/)."""

from django.urls import path

from games import api

urlpatterns = [
    path("daily/", api.DailyTodayApi.as_view(), name="api-daily-today"),
    path("daily/<str:date>/", api.DailyDetailApi.as_view(), name="api-daily"),
    path("daily/<str:date>/attempt/", api.DailyAttemptApi.as_view(), name="api-daily-attempt"),
    path("daily/<str:date>/par/replay/", api.ParReplayApi.as_view(), name="api-daily-par-replay"),
    path("deals/<str:code>/", api.DealApi.as_view(), name="api-deal"),
    path("games/<int:game_id>/", api.GameDetailApi.as_view(), name="api-game-detail"),
    path("games/<int:game_id>/replay/", api.GameReplayApi.as_view(), name="api-game-replay"),
    # With the account's other flows, under auth/ (easyharp_site/accounts/urls.py).
    path("auth/export/", api.ExportApi.as_view(), name="api-export"),
]
