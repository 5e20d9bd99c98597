"""URL wiring only: each app keeps its own routes. The board pages are handed what
the apps above them know (`leaderboards.urls.board_urls`): the races' read of where
a game was played, the leagues' reads of a player's friends and circle.
Leaderboards may not import races or leagues; the wiring may."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from easyharp_site.accounts import urls as accounts_urls
from easyharp_site.health import healthz
from easyharp_site.throttling import rate_limited
from leaderboards.api_urls import board_api_urls
from leaderboards.urls import board_urls
from leagues.selectors import circle_sql, friends_sql
from races.selectors import race_game_origins

urlpatterns = [
    # Staff passwords get the same guessing limit as players' (before admin's own route).
    path("admin/login/", rate_limited("auth")(admin.site.login)),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves its start-up script as a file (`?script`), not inline,
    # so the page passes the Content-Security-Policy.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
    path("api/", include(accounts_urls.api_urlpatterns)),
    path("api/", include("games.api_urls")),
    path("api/", include(board_api_urls(friends=friends_sql))),
    path("api/", include("leagues.api_urls")),
    path("api/", include("races.api_urls")),
    path("api/", include("ranking.api_urls")),
    path("healthz/", healthz, name="healthz"),
    path("healthz", healthz),
    path("", include(accounts_urls.urlpatterns)),
    path("", include("games.web_urls")),
    path(
        "",
        include(board_urls(origins=race_game_origins, friends=friends_sql, circle=circle_sql)),
    ),
    path("", include("leagues.urls")),
    path("", include("races.urls")),
    path("", include("ranking.urls")),
    # set_language: the language switch posts here.
    path("i18n/", include("django.conf.urls.i18n")),
]

# API paths answer errors in JSON (`{"error": {...}}`); pages keep Django's pages.
handler400 = "easyharp_site.errors.bad_request"
handler404 = "easyharp_site.errors.not_found"
handler500 = "easyharp_site.errors.server_error"
