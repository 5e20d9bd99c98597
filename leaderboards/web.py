"""HTML pages that show boards: home, a day's leaderboard, a player's page.

The views gather what a page shows first; the page script (`board.js`) keeps a
board current over the live websocket.
"""

from __future__ import annotations

import datetime
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

from easyharp_site.dates import day_from_text, today
from games.selectors import daily_deal_neighbours, daily_deals_served, player_games, player_get
from games.web import daily_deal_or_404, found, page_config
from leaderboards.audiences import audience_known, audience_sql
from leaderboards.models import Board
from leaderboards.selectors import (
    leaderboard_among,
    leaderboard_around,
    leaderboard_entry,
    leaderboard_page,
    player_board_results,
)

RECENT_DAYS = 14
AROUND_ME = 11


def _board(date: datetime.date, order: str, player: Any) -> tuple[dict[str, Any], Any]:
    """The first page of a day's board and the signed-in player's own entry."""
    page = leaderboard_page(date=date, order=order, limit=100)
    me = None
    if player.is_authenticated:
        me = leaderboard_entry(date=date, order=order, player=player)
    return page, me


def home(request: HttpRequest) -> HttpResponse:
    """Today's deal, the player's own result and rank, the top 10 live."""
    day = today()
    daily = daily_deal_or_404(day)
    page, me = _board(day, Board.SCORE, request.user)
    recent = daily_deals_served(until=day)[1 : RECENT_DAYS + 1]
    context = {
        "today": day,
        "deal_code": daily.deal_code,
        "par": daily.par,
        "top": page["entries"][:10],
        "total": page["total"],
        "me": me,
        "recent_days": [served.date for served in recent],
        "config": page_config(request, date=day.isoformat(), order=Board.SCORE, limit=10),
    }
    return render(request, "leaderboards/home.html", context)


def _day_of_page(text: str) -> datetime.date:
    try:
        return day_from_text(text)
    except ValueError:
        raise Http404(_("There is no such day.")) from None


def leaderboard(request: HttpRequest, date: str | None = None) -> HttpResponse:
    """A day's board by score or by moves, kept live by the page script; with
    `?scope=friends`, the signed-in player's friends board."""
    current = today()
    day = _day_of_page(date) if date else current
    if day > current:
        raise Http404(_("That day has not come yet."))
    order = request.GET.get("order", Board.SCORE)
    if order not in Board.values:
        order = Board.SCORE
    daily = daily_deal_or_404(day)
    friends = (
        request.GET.get("scope") == "friends"
        and request.user.is_authenticated
        and audience_known("friends")
    )
    extra: dict[str, str] = {}
    around = None
    if friends and request.user.is_authenticated:
        viewer = request.user.pk
        page = leaderboard_among(
            date=day,
            order=order,
            audience=audience_sql(kind="friends", id=viewer),
            mine=(viewer,),
        )
        me = page.pop("mine")[viewer]
        extra["board_socket"] = (
            f"/ws/daily/{day.isoformat()}/leaderboard/?order={order}&scope=friends"
        )
    else:
        page, me = _board(day, order, request.user)
        if me is not None and request.user.is_authenticated:
            around = leaderboard_around(date=day, order=order, player=request.user, limit=AROUND_ME)
    previous_day, next_day = daily_deal_neighbours(date=day, until=current)
    context = {
        "day": day,
        "is_today": day == current,
        "order": order,
        "friends": friends,
        "deal_code": daily.deal_code,
        "par": daily.par,
        "page": page,
        "me": me,
        "around": around["entries"] if around else [],
        "previous_day": previous_day,
        "next_day": next_day,
        "recent_days": [served.date for served in daily_deals_served(until=current)[:RECENT_DAYS]],
        "config": page_config(request, date=day.isoformat(), order=order, limit=100, **extra),
    }
    return render(request, "leaderboards/leaderboard.html", context)


def player(request: HttpRequest, username: str) -> HttpResponse:
    """A player's daily results and recent games."""
    user = found(player_get, username=username)
    context = {
        "player": user,
        "days": player_board_results(player=user, limit=30),
        "games": player_games(player=user, limit=50),
        "config": page_config(request),
    }
    return render(request, "leaderboards/player.html", context)
