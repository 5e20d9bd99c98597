"""URL wiring only: each app keeps its own routes."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from easyharp_site.throttling import rate_limited
from games.api import healthz

urlpatterns = [
    # Staff passwords get the same guessing limit as players' (before admin's own route).
    path("admin/login/", rate_limited("auth")(admin.site.login)),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/", include("games.api_urls")),
    path("api/", include("leaderboards.api_urls")),
    path("healthz", healthz, name="healthz"),
    path("", include("games.web_urls")),
]

# API paths answer errors in JSON (`{"error": {...}}`); pages keep Django's pages.
handler404 = "games.exceptions.not_found"
handler500 = "games.exceptions.server_error"
