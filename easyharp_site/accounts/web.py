"""The account pages: sign up, the account page (e-mail address, daily reminder, password,
sessions, export, deletion), the page that stops reminders and the password reset.
Django's own views log in and out, and run the password change and reset, with this
project's services doing the writes."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth import login, logout, update_session_auth_hash
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import (
    AuthenticationForm,
    PasswordChangeForm,
    PasswordResetForm,
    SetPasswordForm,
    UserCreationForm,
)
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import get_language, gettext_lazy
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from easyharp_site.accounts import emails, passwords, reminders, selectors, sessions
from easyharp_site.accounts.links import email_verify_link, reset_link
from easyharp_site.accounts.services import player_register
from easyharp_site.errors import ServiceError

# The refusals of the account services in the player's language, by code.
ERROR_TEXTS = {
    "invalid_email": gettext_lazy("This is not an e-mail address."),
    "invalid_link": gettext_lazy(
        "This link does not work: it has expired, has been used, or a newer one was sent. "
        "Ask for a new one."
    ),
    "wrong_password": gettext_lazy("The password is not right."),
    "throttled": gettext_lazy("Too many requests for this address. Please try again later."),
    "mail_unavailable": gettext_lazy(
        "Mail cannot be sent right now. Please try again in a few minutes."
    ),
}


def error_text(error: ServiceError) -> str:
    """A service's refusal as the page shows it."""
    return str(ERROR_TEXTS.get(error.code, error.message))


# Django's forms say these in Spanish with "usted" ("Por favor, vuelva a
# introducirla"); the site says "tú", in msgids of its own (the password
# checks' words are in accounts/validators.py).
PASSWORD_ERRORS = {
    "password_mismatch": gettext_lazy("The two passwords you typed are not the same."),
    "password_incorrect": gettext_lazy("Your current password is not right; type it again."),
}
PASSWORD_AGAIN_HELP = gettext_lazy("Type the same password again, to be sure of it.")
USERNAME_HELP = gettext_lazy(
    "Up to 150 characters: letters, digits and @ . + - _ only. Others see it on the boards."
)


class PasswordAgainHelp:
    """Our words under a password form's "the same again" field."""

    again_field = "new_password2"
    fields: dict[str, Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields[self.again_field].help_text = PASSWORD_AGAIN_HELP


class OurPasswordChangeForm(PasswordAgainHelp, PasswordChangeForm):
    error_messages = {**PasswordChangeForm.error_messages, **PASSWORD_ERRORS}


class OurSetPasswordForm(PasswordAgainHelp, SetPasswordForm):
    error_messages = {**SetPasswordForm.error_messages, **PASSWORD_ERRORS}


class LoginForm(AuthenticationForm):
    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": gettext_lazy(
            "That name and password do not match an account. Both are case-sensitive."
        ),
    }


class SignupForm(PasswordAgainHelp, UserCreationForm):
    error_messages = {**UserCreationForm.error_messages, **PASSWORD_ERRORS}
    again_field = "password2"
    email = forms.EmailField(
        label=gettext_lazy("E-mail address (optional)"),
        required=False,
        max_length=emails.EMAIL_MAX_LENGTH,
        help_text=gettext_lazy(
            "Only to reset a forgotten password. We send a link to confirm it first."
        ),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["username"].help_text = USERNAME_HELP

    def validate_password_for_user(self, user: Any, password_field_name: str = "password1") -> None:
        """A weak password is said under the password itself (Django says it under
        "the same again"), and is checked even when the two typed differ."""
        # django-stubs do not know this method of Django 5.1 yet.
        super().validate_password_for_user(user, password_field_name=password_field_name)  # type: ignore[misc]


def signup(request: HttpRequest) -> HttpResponse:
    """Create an account and sign in at once; back to `next` (e.g. the game in progress)."""
    next_url = request.POST.get("next") or request.GET.get("next") or ""
    if not url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        next_url = ""
    if request.method == "POST":
        form = SignupForm(request.POST)
        if form.is_valid():
            # The form checks what was typed; the service creates the player
            # exactly as the API's sign-up does (API token included).
            try:
                user, _token = player_register(
                    username=form.cleaned_data["username"],
                    password=form.cleaned_data["password1"],
                )
            except ServiceError as error:
                form.add_error(None, error.in_language())
            else:
                login(request, user, backend="django.contrib.auth.backends.ModelBackend")
                if form.cleaned_data["email"]:
                    problem = _email_link_send(request, user, form.cleaned_data["email"])
                    if problem is not None:
                        messages.warning(request, problem)
                return redirect(next_url or "home")
    else:
        form = SignupForm()
    context = {"form": form, "next": next_url}
    return render(request, "registration/signup.html", context)


# --- The account page ------------------------------------------------------------------


class EmailForm(forms.Form):
    email = forms.EmailField(
        label=gettext_lazy("E-mail address"), max_length=emails.EMAIL_MAX_LENGTH
    )


def utc_hour(hour: int) -> str:
    """An hour of the day as the pages write it: `18:00`."""
    return f"{hour:02d}:00"


class ReminderForm(forms.Form):
    hour = forms.TypedChoiceField(
        label=gettext_lazy("Remind me at"),
        choices=[("", gettext_lazy("No reminders"))]
        + [(str(hour), f"{utc_hour(hour)} UTC") for hour in reminders.REMINDER_HOURS],
        coerce=int,
        empty_value=None,
        required=False,
        help_text=gettext_lazy(
            "An e-mail at this hour (UTC) on the days you have not played yet, with "
            "the streak you would keep."
        ),
        widget=forms.Select(attrs={"data-utc-hours": ""}),
    )


class DeleteForm(forms.Form):
    password = forms.CharField(
        label=gettext_lazy("Your password"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )


def _email_link_send(request: HttpRequest, player: User, email: str) -> str | None:
    """Mail a confirming link to `email` and say so on the next page; the error text if not."""
    try:
        pending = emails.email_change_request(player=player, email=email, link=email_verify_link)
    except ServiceError as error:
        return error_text(error)
    if pending is not None:
        messages.success(
            request,
            _(
                "A link to confirm %(email)s is on its way. No mail within ten minutes? "
                "Check the address and ask again."
            )
            % {"email": pending},
        )
    return None


def _account_page(request: HttpRequest, **forms_shown: Any) -> HttpResponse:
    reminder = selectors.reminder_view(player=request.user)  # type: ignore[arg-type]
    context = {
        "account": selectors.account_view(player=request.user),  # type: ignore[arg-type]
        "email_form": forms_shown.get("email_form") or EmailForm(),
        "reminder": reminder,
        "reminder_time": None if reminder.hour is None else utc_hour(reminder.hour),
        "reminder_form": forms_shown.get("reminder_form")
        or ReminderForm(initial={"hour": "" if reminder.hour is None else str(reminder.hour)}),
    }
    return render(request, "accounts/account.html", context)


@login_required
def account(request: HttpRequest) -> HttpResponse:
    """The signed-in player's account: address, password, sessions, export, deletion."""
    return _account_page(request)


@login_required
@require_POST
def email_change(request: HttpRequest) -> HttpResponse:
    """Add or change the address: a link goes to it, and it waits until opened."""
    form = EmailForm(request.POST)
    if form.is_valid():
        problem = _email_link_send(request, request.user, form.cleaned_data["email"])  # type: ignore[arg-type]
        if problem is None:
            return redirect("account")
        form.add_error("email", problem)
    return _account_page(request, email_form=form)


@login_required
@require_POST
def reminder_change(request: HttpRequest) -> HttpResponse:
    """Choose the hour of the daily reminder, or none; the mail speaks this page's language."""
    form = ReminderForm(request.POST)
    if not form.is_valid():
        return _account_page(request, reminder_form=form)
    hour = form.cleaned_data["hour"]
    reminders.reminder_set(
        player=request.user,  # type: ignore[arg-type]
        hour=hour,
        language=get_language(),
    )
    if hour is None:
        messages.success(request, _("No more reminders."))
    else:
        messages.success(
            request,
            _("A reminder will come at %(time)s UTC on the days you have not played yet.")
            % {"time": utc_hour(hour)},
        )
    return redirect(reverse("account") + "#daily-reminder")


# The link of a reminder mail, signed: a mail client's one-click unsubscribe
# (RFC 8058) posts to it with no session or CSRF token, and the signature is
# all it needs; it can do nothing but stop that player's reminders.
@csrf_exempt
@require_http_methods(["GET", "HEAD", "POST"])
def reminders_stop(request: HttpRequest, token: str) -> HttpResponse:
    """A reminder's stopping link: shows a button (a mail scanner that opens links stops
    nothing); the button, or a one-click POST, stops the reminders."""
    context: dict[str, Any] = {}
    try:
        if request.method == "POST":
            reminders.reminders_stop(token=token)
            context["stopped"] = True
        else:
            username, reminded = reminders.reminder_stop_read(token=token)
            context.update(username=username, reminded=reminded)
    except ServiceError as error:
        context["problem"] = error.in_language()
        return render(request, "accounts/reminders_stop.html", context, status=400)
    return render(request, "accounts/reminders_stop.html", context)


def email_verify(request: HttpRequest, token: str) -> HttpResponse:
    """A confirming link: shows the address and a button (mail scanners that open links
    must not use them up); the button confirms it."""
    context: dict[str, Any] = {}
    try:
        if request.method == "POST":
            player = emails.email_verify(token=token)
            context.update(confirmed=True, email=player.email)
        else:
            player, email = emails.email_link_read(token=token)
            context.update(confirmed=False, email=email, username=player.get_username())
    except ServiceError as error:
        context["problem"] = error_text(error)
        return render(request, "accounts/email_verify.html", context, status=400)
    return render(request, "accounts/email_verify.html", context)


@login_required
@require_POST
def logout_everywhere(request: HttpRequest) -> HttpResponse:
    """End every session of the player, this one too, and revoke the API token."""
    sessions.sessions_end_everywhere(player=request.user)  # type: ignore[arg-type]
    logout(request)
    messages.success(
        request, _("You are signed out everywhere, and your API token no longer works.")
    )
    return redirect("login")


# --- Passwords (Django's own views, with this project's writes) ------------------------


class PasswordChange(auth_views.PasswordChangeView):
    """Django's password change; the new password also replaces the API token."""

    template_name = "accounts/password_change.html"
    form_class = OurPasswordChangeForm
    success_url = reverse_lazy("account")

    def form_valid(self, form: Any) -> HttpResponse:
        passwords.password_set(player=form.user, password=form.cleaned_data["new_password1"])
        # This browser stays signed in; Django signs out the player's other sessions.
        update_session_auth_hash(self.request, form.user)
        messages.success(
            self.request,
            _(
                "Your password is changed. Your other sessions are signed out and your "
                "API token was replaced."
            ),
        )
        return HttpResponseRedirect(self.get_success_url())


class PasswordReset(auth_views.PasswordResetView):
    """Ask for a reset link. The next page reads the same for every address."""

    template_name = "accounts/password_reset_form.html"
    form_class = PasswordResetForm
    success_url = reverse_lazy("password-reset-sent")

    def form_valid(self, form: Any) -> HttpResponse:
        try:
            passwords.password_reset_request(email=form.cleaned_data["email"], link=reset_link)
        except ServiceError as error:
            form.add_error(None, error_text(error))
            return self.form_invalid(form)
        return HttpResponseRedirect(self.get_success_url())


class PasswordResetSent(auth_views.PasswordResetDoneView):
    template_name = "accounts/password_reset_sent.html"


class PasswordResetConfirm(auth_views.PasswordResetConfirmView):
    """Django's reset link page (it checks the link, then hides it from the address bar);
    the new password is set by the service, which checks the link once more, and the
    player is signed in."""

    template_name = "accounts/password_reset_confirm.html"
    form_class = OurSetPasswordForm
    success_url = reverse_lazy("password-reset-done")

    def form_valid(self, form: Any) -> HttpResponse:
        token = self.request.session.pop(auth_views.INTERNAL_RESET_SESSION_TOKEN, "")
        try:
            player, _token = passwords.password_reset_complete(
                uid=self.kwargs["uidb64"], token=token, password=form.cleaned_data["new_password1"]
            )
        except ServiceError as error:
            form.add_error(None, error_text(error))
            return self.form_invalid(form)
        login(self.request, player, backend="django.contrib.auth.backends.ModelBackend")
        return HttpResponseRedirect(self.get_success_url())


class PasswordResetDone(auth_views.PasswordResetCompleteView):
    template_name = "accounts/password_reset_done.html"
