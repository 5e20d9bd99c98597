"""Routes of the ranking pages."""

from django.urls import path

from easyharp_site.throttling import rate_limited
from ranking import web

urlpatterns = [
    # With the account's other pages, under accounts/ (easyharp_site/accounts/urls.py).
    path("accounts/delete/", rate_limited("auth")(web.account_delete), name="account-delete"),
]
