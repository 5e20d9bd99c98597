"""Sessions and API tokens: sign out everywhere, replace the API token, end a player's access.

Django ends a player's other sessions by itself when their password changes
(each session carries a digest of the password hash). To end them without a
new password, every session also carries the player's *session generation*,
stamped at sign-in; "sign out everywhere" raises the generation, and
`middleware.SessionGenerationMiddleware` signs out any session stamped with
an older one on its next request, and `live` closes its open sockets.

A new password and a deactivation (a ban, a deletion) end the player's access
through `player_access_end`, called by one hook on every save of a player
(`receivers.player_standing_saved`), whatever door changed them: the pages, the
API, the admin's password form, `manage.py changepassword`, or code.
"""

from __future__ import annotations

from functools import partial

from django.contrib.auth.models import User
from django.contrib.sessions.backends.base import SessionBase
from django.db import transaction
from django.db.models import F
from rest_framework.authtoken.models import Token

from easyharp_site.accounts.live import player_sessions_ended
from easyharp_site.accounts.models import Account
from easyharp_site.accounts.selectors import SESSION_GENERATION_KEY, sessions_generation


def session_stamp(*, session: SessionBase, player: User) -> None:
    """Stamp a session just signed in with the player's current generation."""
    session[SESSION_GENERATION_KEY] = sessions_generation(player_id=player.pk)


def player_access_end(*, player_id: int) -> None:
    """Revoke the player's API token and, after commit, close their open sockets whose
    session no longer holds (`live`). Within the caller's transaction."""
    Token.objects.filter(user_id=player_id).delete()
    transaction.on_commit(partial(player_sessions_ended, player_id=player_id))


@transaction.atomic
def sessions_end_everywhere(*, player: User) -> None:
    """Sign the player out of every session and revoke their API token.

    Sessions end on their next request (the browser that asked is signed out
    by the caller), their open sockets at once; a client with the old token
    must sign in again.
    """
    Account.objects.get_or_create(player=player)
    Account.objects.filter(player=player).update(sessions_generation=F("sessions_generation") + 1)
    player_access_end(player_id=player.pk)


@transaction.atomic
def token_replace(*, player: User) -> str:
    """Give the player a new API token; the old one stops working at once."""
    Token.objects.filter(user=player).delete()
    return str(Token.objects.create(user=player).key)
