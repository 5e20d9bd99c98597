"""The account pages: sign up (Django's own views log in and out)."""

from __future__ import annotations

from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme

from easyharp_site.accounts.services import player_register
from easyharp_site.errors import ServiceError


def signup(request: HttpRequest) -> HttpResponse:
    """Create an account and sign in at once; back to `next` (e.g. the game in progress)."""
    next_url = request.POST.get("next") or request.GET.get("next") or ""
    if not url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        next_url = ""
    if request.method == "POST":
        form: UserCreationForm[User] = UserCreationForm(request.POST)
        if form.is_valid():
            # The form checks what was typed; the service creates the player
            # exactly as the API's sign-up does (API token included).
            try:
                user, _token = player_register(
                    username=form.cleaned_data["username"],
                    password=form.cleaned_data["password1"],
                )
            except ServiceError as error:
                form.add_error(None, error.message)
            else:
                login(request, user, backend="django.contrib.auth.backends.ModelBackend")
                return redirect(next_url or "home")
    else:
        form = UserCreationForm()
    context = {"form": form, "next": next_url}
    return render(request, "registration/signup.html", context)
