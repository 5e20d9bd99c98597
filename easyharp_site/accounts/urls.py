"""Routes of accounts: `api_urlpatterns` under api/, `urlpatterns` for the pages."""

from django.contrib.auth import views as auth_views
from django.urls import path

from easyharp_site.accounts import api, web
from easyharp_site.throttling import rate_limited

api_urlpatterns = [
    path("auth/register/", api.RegisterApi.as_view(), name="api-register"),
    path("auth/token/", api.TokenApi.as_view(), name="api-token"),
    path("auth/login/", api.LoginApi.as_view(), name="api-login"),
    path("auth/logout/", api.LogoutApi.as_view(), name="api-logout"),
]

urlpatterns = [
    # The forms share the API's sign-up and log-in rate limits.
    path("accounts/signup/", rate_limited("signup")(web.signup), name="signup"),
    path("accounts/login/", rate_limited("auth")(auth_views.LoginView.as_view()), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
]
