"""HTML pages of races: the races page (create one, your races), a race's page (its
lobby, then the play view, then its results) and a player's races.

Forms post to these views, which call the services and redirect (a refusal
comes back as a message on the page). The play view plays with the same
engine and table drawing as the play page (`race.js` over `engine.js`,
`ui.js` and `tableinput.js`), and sends each action over the race's socket.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from easyharp_site.errors import ServiceError
from easyharp_site.site import site_url
from games.selectors import player_get
from games.web import found, page_config
from races import selectors, services
from races.models import RACERS_MAX, TIME_LIMITS_MINUTES

ERROR_TEXTS = {
    "race_full": gettext_lazy("This race has 8 players already, the most a race may have."),
    "race_started": gettext_lazy("This race has started: players join before the start."),
    "race_over": gettext_lazy("This race is over."),
    "not_host": gettext_lazy("Only the race's host starts it."),
    "not_in_race": gettext_lazy("You are not in this race."),
    "invalid_time_limit": gettext_lazy("Choose a time limit from the list."),
    "race_not_over": gettext_lazy("A rematch is made once the race is over."),
}


def race_strings() -> dict[str, Any]:
    """The strings race.js shows, in the active language."""
    return {
        "race_lobby": _("Waiting for {host} to start the race."),
        "race_lobby_host": _("Start the race when everyone is in."),
        "race_countdown": _("The race starts in {seconds}…"),
        "race_running": _("Time left {time}"),
        "race_on": _("The race is on."),
        "race_over": _("The race is over."),
        "race_won_by": _("{player} won the race!"),
        "race_best_score": _("Time is up: {player} wins with the best score."),
        "race_started": _("The race has started: go!"),
        "race_joined": _("{player} joined the race."),
        "race_left": _("{player} left the race."),
        "race_you": _("you"),
        "race_host": _("host"),
        "race_away": _("away"),
        "race_gone": _("left"),
        "race_removed": _("removed"),
        "race_removed_news": _("{player} was removed from the race."),
        "race_winner": _("winner"),
        "race_foundations": _("{count} of 104 cards on the foundations"),
        "race_players": _("{count} of {max} players"),
        "race_not_started": _("The race has not started yet."),
        "race_refused_over": _("The race is over: that action does not count."),
        "race_too_fast": _(
            "Your moves reached the server faster than a person plays: they are sent "
            "again in a moment."
        ),
        "race_left_you": _("You left this race: your game stops here."),
        "race_offline": _(
            "Connection lost: reconnecting… Your actions are sent as soon as it is back."
        ),
        "race_confirm_leave": _("Leave the race? Your game stops where it is."),
    }


def _refused(request: HttpRequest, error: ServiceError) -> None:
    messages.error(request, str(ERROR_TEXTS.get(error.code, error.in_language())))


def _signed_in(request: HttpRequest) -> User:
    assert request.user.is_authenticated  # login_required
    return request.user


def races_page(request: HttpRequest) -> HttpResponse:
    """Create a race (signed in), and the player's recent races."""
    if request.method == "POST":
        if not request.user.is_authenticated:
            return redirect(f"{reverse('login')}?next={request.path}")
        try:
            minutes = int(request.POST.get("minutes", ""))
        except ValueError:
            minutes = 0
        try:
            race = services.race_create(host=_signed_in(request), minutes=minutes)
        except ServiceError as error:
            _refused(request, error)
        else:
            return redirect("race", code=race.code)
    races: list[dict[str, Any]] = []
    if request.user.is_authenticated:
        races = selectors.player_races(player=request.user)
    context = {
        "races": races,
        "time_limits": TIME_LIMITS_MINUTES,
        "max_players": RACERS_MAX,
        "config": page_config(request),
    }
    return render(request, "races/races.html", context)


def race_page(request: HttpRequest, code: str) -> HttpResponse:
    """A race: its lobby (players, the invite link, join, start, leave), the play view
    for its players while it runs, and its results with each player's replay. Anyone
    else sees the lobby and the players' progress live (`races.consumers`)."""
    race = found(selectors.race_get, code=code)
    state = selectors.race_state(race=race, now=timezone.now())
    me = None
    if request.user.is_authenticated:
        me = selectors.racer_get(race=race, player=request.user)
    if me is None:
        # Whoever is not in the race watches it: its players and progress, no deal.
        state = selectors.race_state_watched(state)
    config = page_config(
        request,
        race=race.code,
        race_socket=f"/ws/races/{race.code}/",
        race_state=state,
    )
    config["strings"] = {**config["strings"], **race_strings()}
    context = {
        "race": race,
        "state": state,
        "me": me,
        "is_host": me is not None and race.host_id == me.player_id,
        "full": len(state["players"]) >= RACERS_MAX,
        "minutes": state["time_limit_s"] // 60,
        "invite_url": site_url(reverse("race", args=[race.code])),
        # The players of the race this one is the rematch of who have not joined yet.
        "invited": selectors.race_invited(race=race) if state["status"] == "lobby" else [],
        "config": config,
    }
    return render(request, "races/race.html", context)


@login_required
@require_POST
def race_action(request: HttpRequest, code: str, action: str) -> HttpResponse:
    """The race page's buttons: join, start, leave, and once over the rematch (made, or
    joined: then its page)."""
    player = _signed_in(request)
    doing = {"join": services.race_join, "start": services.race_start, "leave": services.race_leave}
    if action not in doing and action != "rematch":
        raise Http404
    try:
        if action == "rematch":
            rematch, _made = services.race_rematch(player=player, code=code)
            return redirect("race", code=rematch.code)
        doing[action](player=player, code=code)
    except ServiceError as error:
        if error.code == "not_found":
            raise Http404(error.in_language()) from None
        _refused(request, error)
    return redirect("race", code=code)


def player_races_page(request: HttpRequest, username: str) -> HttpResponse:
    """A player's races: each with its players, the player's place and result, and
    the replay of their game."""
    player = found(player_get, username=username)
    context = {
        "player": player,
        "races": selectors.player_races(player=player, limit=50, ended=True),
        "config": page_config(request),
    }
    return render(request, "races/player.html", context)
