"""The service's routes plus `bench/bare-games/` (benchmark settings only)."""

from django.urls import path

from bench.bare import BareGameApi
from easyharp_site.urls import urlpatterns as service_urlpatterns

urlpatterns = [
    path("bench/bare-games/", BareGameApi.as_view()),
    *service_urlpatterns,
]
