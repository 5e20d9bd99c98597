"""Routes of the ranking API (included under api/)."""

from django.urls import path

from ranking import api

urlpatterns = [
    path("games/", api.GameCreateApi.as_view(), name="api-game-create"),
    path("hint/", api.HintApi.as_view(), name="api-hint"),
    # With the account's other flows, under auth/ (easyharp_site/accounts/urls.py).
    path("auth/delete/", api.AccountDeleteApi.as_view(), name="api-account-delete"),
]
