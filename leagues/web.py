"""HTML pages of friends, leagues and standings.

Forms post to these views, which call the services and redirect (a refusal
comes back as a message on the page). A league's page and its board are for
its members only: anyone else gets the same 404 as for a league that does
not exist.
"""

from __future__ import annotations

import datetime
import math
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from easyharp_site.dates import day_from_text, today
from easyharp_site.errors import ServiceError
from easyharp_site.site import site_url
from easyharp_site.throttling import limit_refusal, rate_limited
from games.selectors import daily_deal_get, day_lock, player_get
from games.web import found, page_config
from leaderboards.models import Board
from leaderboards.selectors import leaderboard_among
from leaderboards.web import playing_now
from leagues import selectors, services
from leagues.models import League, Period

ERROR_TEXTS = {
    "cannot_follow_self": gettext_lazy("You cannot follow yourself."),
    "too_many_follows": gettext_lazy("You follow 1,000 players already, the most one may follow."),
    "too_many_leagues": gettext_lazy("You are in 50 leagues already, the most one may join."),
    "league_full": gettext_lazy("This league has 1,000 members, the most a league may have."),
    "invalid_code": gettext_lazy("No league has that invite code (it may have been renewed)."),
    "invalid_name": gettext_lazy("A league needs a name of at most 60 characters."),
    "owner_cannot_leave": gettext_lazy("The owner cannot leave the league; delete it instead."),
    "not_owner": gettext_lazy("Only the league's owner may do that."),
    "not_a_member": gettext_lazy("No other member has that name."),
}


def _refused(request: HttpRequest, error: ServiceError) -> None:
    messages.error(request, str(ERROR_TEXTS.get(error.code) or error.in_language()))


def _league_or_404(slug: str, viewer: Any) -> League:
    return found(selectors.league_get, slug=slug, viewer=viewer)


def _signed_in(request: HttpRequest) -> User:
    assert request.user.is_authenticated  # login_required
    return request.user


# --- Friends -----------------------------------------------------------------------


@login_required
def friends(request: HttpRequest) -> HttpResponse:
    """Find players by the beginning of their name (a plain GET form: the results are
    on the page), follow or stop following them, and the players one follows.

    A search counts against the API's search limit (`THROTTLE_SEARCH`, per client
    address); a refused one says why, with the status the API would give.
    """
    player = _signed_in(request)
    query = request.GET.get("q")
    results, refusal, status, wait = None, None, 200, None
    if query is not None:
        query = query.strip()
        wait = limit_refusal(request, "search")
        if wait is not None:
            refusal = _("Too many searches in a short time; wait a minute and search again.")
            status = 429
        else:
            try:
                results = selectors.player_search(prefix=query, viewer=player)
            except ServiceError as error:
                refusal, status = error.in_language(), error.status_code
    context = {
        "query": query or "",
        "results": results,
        "search_limit": selectors.SEARCH_LIMIT,
        "refusal": refusal,
        "following": selectors.followed_players(follower=player),
        **playing_now(player, circle=selectors.circle_sql),
        "config": page_config(request),
    }
    response = render(request, "leagues/friends.html", context, status=status)
    if wait is not None:
        response["Retry-After"] = str(max(1, math.ceil(wait)))
    return response


@login_required
@require_POST
def friend_action(request: HttpRequest, action: str) -> HttpResponse:
    """The friends page's buttons: follow a player, or stop following them; then back
    to the page, with the search that was on it."""
    if action not in {"follow", "unfollow"}:
        raise Http404
    player = _signed_in(request)
    try:
        followee = player_get(username=request.POST.get("username", ""))
        words = {"player": followee.get_username()}
        if action == "follow":
            services.follow_add(follower=player, followee=followee)
            messages.success(request, _("You follow %(player)s now.") % words)
        else:
            services.follow_remove(follower=player, followee=followee)
            messages.success(request, _("You no longer follow %(player)s.") % words)
    except ServiceError as error:
        _refused(request, error)
    query = request.POST.get("q", "").strip()
    page = reverse("friends")
    return redirect(f"{page}?{urlencode({'q': query})}" if query else page)


# --- Leagues -----------------------------------------------------------------------


@login_required
def league_list(request: HttpRequest) -> HttpResponse:
    """The player's leagues, a form to create one and a form to join one by code."""
    player = _signed_in(request)
    if request.method == "POST":
        try:
            league = services.league_create(owner=player, name=request.POST.get("name", ""))
        except ServiceError as error:
            _refused(request, error)
        else:
            return redirect("league", slug=league.slug)
    context = {
        "leagues": selectors.player_leagues(player=player),
        "following": selectors.followed_players(follower=player),
        **playing_now(player, circle=selectors.circle_sql),
        "config": page_config(request),
    }
    return render(request, "leagues/list.html", context)


def _join(request: HttpRequest, code: str) -> HttpResponse | None:
    try:
        league = services.league_join(player=_signed_in(request), code=code)
    except ServiceError as error:
        _refused(request, error)
        return None
    return redirect("league", slug=league.slug)


@login_required
@require_POST
@rate_limited("join")
def league_join_form(request: HttpRequest) -> HttpResponseBase:
    """Join with a code or link typed into the leagues page."""
    return _join(request, request.POST.get("code", "")) or redirect("leagues")


@rate_limited("join")
def league_invite(request: HttpRequest, code: str) -> HttpResponseBase:
    """The invite link: the league's name and a button to join (a signed-out visitor is
    asked to log in first). Opening the link joins nothing: link previews must not."""
    if request.method == "POST":
        if not request.user.is_authenticated:
            return redirect(f"{reverse('login')}?next={request.path}")
        return _join(request, code) or redirect("leagues")
    league = selectors.league_by_code(code=code)
    if league is None:
        raise Http404(_("No league has that invite code (it may have been renewed)."))
    return render(
        request,
        "leagues/invite.html",
        {"league": league, "code": code, "config": page_config(request)},
    )


def _day(text: str | None) -> datetime.date:
    if not text:
        return today()
    try:
        day = day_from_text(text)
    except ValueError:
        raise Http404(_("There is no such day.")) from None
    if day > today():
        raise Http404(_("That day has not come yet."))
    return day


@login_required
def league(request: HttpRequest, slug: str) -> HttpResponse:
    """A league: its board of the day (live), its standings, members and invite link."""
    player = _signed_in(request)
    current = _league_or_404(slug, player)
    day = _day(request.GET.get("date"))
    order = request.GET.get("order", Board.SCORE)
    if order not in Board.values:
        order = Board.SCORE
    period = request.GET.get("period", Period.WEEK)
    if period not in Period.values:
        period = Period.WEEK
    daily = found(daily_deal_get, date=day)
    board = leaderboard_among(
        date=day,
        order=order,
        audience=selectors.league_members_sql(current.pk),
        limit=100,
    )
    socket = f"/ws/leagues/{current.slug}/daily/{day.isoformat()}/leaderboard/?order={order}"
    replays_locked = day_lock(date=day, viewer=player)
    context = {
        "league": current,
        "is_owner": current.owner_id == player.pk,
        "day": day,
        "is_today": day == today(),
        "order": order,
        "period": period,
        "deal_code": daily.deal_code,
        "page": board,
        "players": selectors.league_members(league=current),
        "standings": selectors.league_standings(
            league=current, period=period, at=day, viewer=player
        ),
        "invite_url": site_url(reverse("league-invite", args=[current.invite_code])),
        "replays_locked": replays_locked,
        "config": page_config(
            request,
            date=day.isoformat(),
            order=order,
            limit=100,
            board_socket=socket,
            replays_locked=replays_locked is not None,
        ),
    }
    return render(request, "leagues/league.html", context)


# The owner's actions that cannot be taken back: their link opens a page that asks first.
CONFIRMED_ACTIONS = frozenset({"delete", "remove"})


def _confirmation(request: HttpRequest, player: User, slug: str, action: str) -> HttpResponse:
    """The page that asks the owner before deleting the league or removing a member;
    its button posts the action."""
    if action not in CONFIRMED_ACTIONS:
        return HttpResponseNotAllowed(["POST"])
    current = _league_or_404(slug, player)
    if current.owner_id != player.pk:
        messages.error(request, str(ERROR_TEXTS["not_owner"]))
        return redirect("league", slug=slug)
    member = request.GET.get("username", "") if action == "remove" else ""
    if action == "remove" and (
        member == player.get_username() or member not in selectors.league_members(league=current)
    ):
        messages.error(request, str(ERROR_TEXTS["not_a_member"]))
        return redirect("league", slug=slug)
    context = {
        "league": current,
        "action": action,
        "member": member,
        "config": page_config(request),
    }
    return render(request, "leagues/confirm.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def league_action(request: HttpRequest, slug: str, action: str) -> HttpResponse:
    """The league page's buttons: leave, renew the code, delete, remove a member.

    Deleting and removing ask first: their GET is the page that asks, whose
    button posts here; the others are buttons that post at once.
    """
    player = _signed_in(request)
    if request.method == "GET":
        return _confirmation(request, player, slug, action)
    try:
        if action == "leave":
            services.league_leave(player=player, slug=slug)
            return redirect("leagues")
        if action == "renew":
            services.league_code_renew(owner=player, slug=slug)
        elif action == "delete":
            services.league_delete(owner=player, slug=slug)
            return redirect("leagues")
        elif action == "remove":
            services.league_member_remove(
                owner=player, slug=slug, username=request.POST.get("username", "")
            )
        else:
            raise Http404
    except ServiceError as error:
        if error.code == "not_found":
            raise Http404(error.in_language()) from None
        _refused(request, error)
    return redirect("league", slug=slug)


def standings(request: HttpRequest) -> HttpResponse:
    """The weekly or monthly standings of every player (the top 100, and one's own place)."""
    period = request.GET.get("period", Period.WEEK)
    if period not in Period.values:
        period = Period.WEEK
    day = _day(request.GET.get("at"))
    page = selectors.standings_page(period=period, at=day, limit=100, viewer=request.user)
    return render(
        request,
        "leagues/standings.html",
        {"period": period, "page": page, "config": page_config(request)},
    )
