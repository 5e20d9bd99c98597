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
    path(
        "auth/logout/everywhere/",
        api.LogoutEverywhereApi.as_view(),
        name="api-logout-everywhere",
    ),
    path("auth/token/rotate/", api.TokenRotateApi.as_view(), name="api-token-rotate"),
    path("auth/me/", api.AccountApi.as_view(), name="api-account"),
    path("auth/settings/", api.SettingsApi.as_view(), name="api-settings"),
    path("auth/reminder/", api.ReminderApi.as_view(), name="api-reminder"),
    path("auth/email/", api.EmailApi.as_view(), name="api-email"),
    path("auth/email/verify/", api.EmailVerifyApi.as_view(), name="api-email-verify"),
    path("auth/password/change/", api.PasswordChangeApi.as_view(), name="api-password-change"),
    path("auth/password/reset/", api.PasswordResetApi.as_view(), name="api-password-reset"),
    path(
        "auth/password/reset/confirm/",
        api.PasswordResetConfirmApi.as_view(),
        name="api-password-reset-confirm",
    ),
]

urlpatterns = [
    # The forms share the API's sign-up and log-in rate limits.
    path("accounts/signup/", rate_limited("signup")(web.signup), name="signup"),
    path(
        "accounts/login/",
        rate_limited("auth")(auth_views.LoginView.as_view(authentication_form=web.LoginForm)),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/", web.account, name="account"),
    path("accounts/email/", rate_limited("email")(web.email_change), name="email-change"),
    path("accounts/email/verify/<str:token>/", web.email_verify, name="email-verify"),
    path("accounts/reminder/", web.reminder_change, name="reminder-change"),
    path("accounts/reminders/stop/<str:token>/", web.reminders_stop, name="reminders-stop"),
    path(
        "accounts/password/change/",
        rate_limited("auth")(web.PasswordChange.as_view()),
        name="password-change",
    ),
    path(
        "accounts/password/reset/",
        rate_limited("reset")(web.PasswordReset.as_view()),
        name="password-reset",
    ),
    path(
        "accounts/password/reset/sent/", web.PasswordResetSent.as_view(), name="password-reset-sent"
    ),
    path(
        "accounts/reset/<uidb64>/<token>/",
        rate_limited("auth")(web.PasswordResetConfirm.as_view()),
        name="password-reset-confirm",
    ),
    path("accounts/reset/done/", web.PasswordResetDone.as_view(), name="password-reset-done"),
    path("accounts/logout/everywhere/", web.logout_everywhere, name="logout-everywhere"),
]
