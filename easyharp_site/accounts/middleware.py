"""Sign out sessions that "sign out everywhere" has ended (see `sessions`)."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth import SESSION_KEY, logout
from django.http import HttpRequest, HttpResponseBase

from easyharp_site.accounts.selectors import SESSION_GENERATION_KEY, sessions_generation


class SessionGenerationMiddleware:
    """Sign out a session stamped with an older generation than its player's.

    Costs one primary-key read per request of a signed-in session; requests
    without a session, and API requests with a token, cost nothing.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        player_id = request.session.get(SESSION_KEY)
        if player_id is not None:
            stamped = request.session.get(SESSION_GENERATION_KEY, 0)
            if stamped < sessions_generation(player_id=int(player_id)):
                logout(request)
        return self.get_response(request)
