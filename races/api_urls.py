"""Routes of the races API (included under api/)."""

from django.urls import path

from races import api

urlpatterns = [
    path("races/", api.RacesApi.as_view(), name="api-races"),
    path("races/<str:code>/", api.RaceApi.as_view(), name="api-race"),
    path("races/<str:code>/join/", api.RaceJoinApi.as_view(), name="api-race-join"),
    path("races/<str:code>/start/", api.RaceStartApi.as_view(), name="api-race-start"),
    path("races/<str:code>/leave/", api.RaceLeaveApi.as_view(), name="api-race-leave"),
    path("races/<str:code>/rematch/", api.RaceRematchApi.as_view(), name="api-race-rematch"),
]
