"""The doors of `ranking.actions` among the site's pages: deleting an account."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from easyharp_site.accounts.web import DeleteForm, error_text
from easyharp_site.errors import ServiceError
from ranking import actions


@login_required
def account_delete(request: HttpRequest) -> HttpResponse:
    """Delete the account, once the player confirms their password."""
    form = DeleteForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            actions.player_delete(
                player=request.user,  # type: ignore[arg-type]
                password=form.cleaned_data["password"],
            )
        except ServiceError as error:
            form.add_error("password", error_text(error))
        else:
            logout(request)
            return render(request, "accounts/deleted.html")
    context = {"form": form, "reserved_days": settings.ACCOUNT_USERNAME_RESERVED_DAYS}
    return render(request, "accounts/delete.html", context)
