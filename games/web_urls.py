"""Routes of the HTML pages (the API has its own, under api/)."""

from django.contrib.auth import views as auth_views
from django.urls import include, path

from easyharp_site.throttling import rate_limited
from games import web

urlpatterns = [
    path("", web.home, name="home"),
    path("play/", web.play, name="play"),
    path("leaderboard/", web.leaderboard, name="leaderboard"),
    path("leaderboard/<str:date>/", web.leaderboard, name="leaderboard-day"),
    path("replays/<int:game_id>/", web.replay, name="replay"),
    path("players/<str:username>/", web.player, name="player"),
    path("rules/", web.rules_page, name="rules"),
    # The forms share the API's sign-up and log-in rate limits.
    path("accounts/signup/", rate_limited("signup")(web.signup), name="signup"),
    path("accounts/login/", rate_limited("auth")(auth_views.LoginView.as_view()), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # set_language: the language switch posts here.
    path("i18n/", include("django.conf.urls.i18n")),
]
