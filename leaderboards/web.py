"""HTML pages that show boards: home, a day's leaderboard, a player's page, the archive;
and the pictures their shared links unfurl with.

The views gather what a page shows first; the page script (`board.js`) keeps a
board current over the live websocket, `countdown.js` counts down to the
next deal.
"""

from __future__ import annotations

import calendar
import contextlib
import datetime
import hashlib
import math
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.formats import date_format
from django.utils.translation import get_language, ngettext
from django.utils.translation import gettext as _
from redis.exceptions import RedisError

from easyharp_site.dates import day_from_text, today
from easyharp_site.site import site_host
from easyharp_site.throttling import limit_refusal
from games.origins import Origins, game_origins, no_origins
from games.selectors import (
    attempt_is_open,
    attempt_watchable,
    daily_day_number,
    daily_deal_first_date,
    daily_deal_neighbours,
    daily_deals_served,
    day_lock,
    game_get,
    game_held_for,
    game_lock,
    par_lock,
    par_result,
    player_games,
    player_get,
    replay_locks,
)
from games.web import (
    daily_deal_or_404,
    day_open_graph,
    found,
    open_graph,
    page_config,
    standing_text,
)
from leaderboards.audiences import (
    Members,
    audience_off_board,
    audience_playing,
)
from leaderboards.cards import (
    CARD_VERSION,
    SQUARE_KINDS,
    card_png,
    grid_rows,
    share_lines,
    share_title,
)
from leaderboards.models import Board
from leaderboards.selectors import (
    day_results,
    day_winners,
    days_between,
    game_share,
    leaderboard_among,
    leaderboard_around,
    leaderboard_entry,
    leaderboard_page,
    player_badges,
    player_board_results,
    player_day,
    player_stats,
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


# Bars of a distribution on a page: at most this many, each a range of round width.
DISTRIBUTION_BARS = 8
_ROUND_STEPS = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000)


def histogram_bars(rows: Sequence[tuple[str, int]]) -> list[dict[str, Any]]:
    """Rows of (label, count) as bars: `{label, count, width}`, width in % of the largest."""
    largest = max((count for _, count in rows), default=0)
    return [
        {"label": label, "count": count, "width": round(100 * count / largest) if largest else 0}
        for label, count in rows
    ]


def distribution_bars(
    values: Sequence[tuple[int, int]], bars: int = DISTRIBUTION_BARS
) -> list[dict[str, Any]]:
    """(value, players) pairs grouped into at most `bars` equal ranges of values, as bars."""
    if not values:
        return []
    low, high = values[0][0], values[-1][0]
    wanted = math.ceil((high - low + 1) / bars)
    step = next((step for step in _ROUND_STEPS if step >= wanted), wanted)
    low = low // step * step
    counts: dict[int, int] = {}
    for value, players in values:
        start = low + (value - low) // step * step
        counts[start] = counts.get(start, 0) + players
    rows = [
        (str(start) if step == 1 else f"{start}–{start + step - 1}", counts[start])
        for start in sorted(counts)
    ]
    return histogram_bars(rows)


def moves_over_par_bars(buckets: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The histogram of a record (`player_stats`'s `moves_vs_par`) as bars with labels."""
    rows = []
    for bucket in buckets:
        low, high = bucket["min"], bucket["max"]
        if low is None:
            label = _("par or better")
        elif high is None:
            label = f"≥ +{low}"
        else:
            label = f"+{low}–{high}"
        rows.append((label, bucket["games"]))
    return histogram_bars(rows)


def _your_day(player: Any, day: datetime.date, yesterday: datetime.date | None) -> dict[str, Any]:
    """The signed-in player's day for the home page: today's ranked game as it stands
    (its result line as the share card words it), whether the attempt is open, the
    streak, and yesterday's final result."""
    if not player.is_authenticated:
        return {}
    mine = player_day(player=player, date=day)
    before = player_day(player=player, date=yesterday) if yesterday else None
    return {
        "mine": mine,
        "mine_result": share_lines(mine)[0] if mine else None,
        "mine_standing": standing_text(
            rank=mine["rank"], total=mine["total"], percentile=mine["percentile"]
        )
        if mine and mine["percentile"] is not None
        else None,
        "attempt_open": mine is None and attempt_is_open(player=player, date=day),
        "streak": player_stats(player=player, on=day)["current_streak"],
        "yesterday_mine": before,
        # Its result and rank; the streak is today's, shown once.
        "yesterday_lines": share_lines({**before, "streak": None}, details=False) if before else [],
    }


def home(request: HttpRequest, *, circle: Members | None = None) -> HttpResponse:
    """Today's deal and the player's day: before they played, an invitation to play;
    after, their result against par, rank and percentile now, streak and yesterday's
    final result. Then the top 10 live, today's spread of scores so far, yesterday's
    winners and the countdown to the next deal."""
    day = today()
    daily = daily_deal_or_404(day)
    page = leaderboard_page(date=day, order=Board.SCORE, limit=10)
    recent = list(daily_deals_served(until=day)[1 : RECENT_DAYS + 1])
    yesterday = day - datetime.timedelta(days=1)
    yesterday_deal = recent[0].deal_code if recent and recent[0].date == yesterday else None
    # A day with no deal stored (the service was not running) has no board to link to.
    served_yesterday = yesterday if yesterday_deal else None
    replays_locked = day_lock(date=day, viewer=request.user)
    context = {
        "today": day,
        "day_number": daily_day_number(day),
        "deal_code": daily.deal_code,
        "par": daily.par,
        "closes_at": daily.closes_at,
        "top": page["entries"][:10],
        "total": page["total"],
        **_your_day(request.user, day, served_yesterday),
        **playing_now(request.user, circle=circle),
        **_today_spread(day),
        "yesterday": served_yesterday,
        "yesterday_deal": yesterday_deal,
        "yesterday_winners": day_winners(date=yesterday, limit=3),
        "recent_days": [served.date for served in recent],
        "replays_locked": replays_locked,
        "og": day_open_graph(request, daily=daily, title=_("Easy Harp Daily #%(number)s")),
        "config": page_config(
            request,
            date=day.isoformat(),
            order=Board.SCORE,
            limit=10,
            replays_locked=replays_locked is not None,
        ),
    }
    return render(request, "leaderboards/home.html", context)


def playing_now(viewer: Any, *, circle: Members | None) -> dict[str, Any]:
    """The "Playing now" section of the home and friends pages: the viewer's friends
    and league members whose ranked game of today is running (names only: nothing of
    their games), and whether the viewer may watch them yet (once they have played
    today, `day_lock`). Empty for a visitor, or without `circle` (who the viewer's
    friends and league members are: the leagues' read, which the wiring passes)."""
    if not viewer.is_authenticated or circle is None:
        return {"playing_now": None}
    day = today()
    return {
        "playing_now": audience_playing(date=day, audience=circle(viewer.pk)),
        "playing_watchable": day_lock(date=day, viewer=viewer) is None,
        "playing_poll_seconds": settings.PLAYING_NOW_POLL_SECONDS,
    }


def playing_now_section(request: HttpRequest, *, circle: Members | None = None) -> HttpResponse:
    """The "Playing now" section alone, which the pages take again every
    PLAYING_NOW_POLL_SECONDS (`nowplaying.js`); never kept by a cache."""
    response = render(
        request, "leaderboards/_playing_now.html", playing_now(request.user, circle=circle)
    )
    response["Cache-Control"] = "private, no-store"
    return response


def _today_spread(day: datetime.date) -> dict[str, Any]:
    """The day's results so far and the bars of their scores (`_today_spread.html`)."""
    results = day_results(date=day)
    scores = [(row["score"], row["players"]) for row in results["score_distribution"]]
    return {"results": results, "score_bars": distribution_bars(scores)}


def today_spread(request: HttpRequest) -> HttpResponse:
    """The home page's "Today so far" section alone: the page takes it again when its
    live board has more players than the section counts (board.js). It reads the
    boards' counters only, as `GET /api/daily/{date}/results/` does."""
    return render(request, "leaderboards/_today_spread.html", _today_spread(today()))


def replay(request: HttpRequest, game_id: int, origins: Origins = no_origins) -> HttpResponse:
    """A stored game, step by step from the API's replay frames, with what it was:
    its day, its player, ranked or practice (or the race it was played in, with its
    place there, as `origins` says: `leaderboards.urls.board_urls`), its rank on the
    day's board and its time. While its day runs, only for its player and those who
    have played the day (the no-spoiler rule)."""
    game = found(game_get, game_id=game_id)
    # A shared link unfurls with the game's result card, locked or not.
    og = open_graph(
        request,
        title=_("Game by %(player)s") % {"player": game.player.get_username()},
        description=_("Score %(score)s, %(moves)s moves.")
        % {"score": game.score, "moves": game.moves},
        image=reverse("card-game", args=[game.pk]),
    )
    lock = game_lock(game=game, viewer=request.user)
    if lock is not None:
        locked = {"game": game, "lock": lock, "og": og, "config": page_config(request)}
        return render(request, "games/replay_locked.html", locked, status=403)
    context = {
        "game": game,
        "facts": game_share(game=game),
        # A game of no day stored by an app above (a race's): what it was, with a link.
        "origin": game_origins(games=[game], origins=origins).get(game.pk),
        # A game of another deal than the day's has no day: the date it was played.
        "played_on": game.created_at.date(),
        "held": game_held_for(game=game, viewer=request.user),
        "against_par": _against_par(game),
        "config": page_config(
            request,
            game=game.pk,
            replay_url=f"/api/games/{game.pk}/replay/",
            # Per-action times (ms since the attempt's start): the replay's real speed.
            times=game.times,
        ),
        "og": og,
    }
    return render(request, "games/replay.html", context)


def _against_par(game: Any) -> dict[str, Any] | None:
    """How far a game of a closed day's deal was from that day's par line: its moves and
    score less the par's, and the par itself; None while the day runs (the par line is
    its answer) or for a game of no day, or a day without a par line."""
    daily = game.daily
    if daily is None or daily.number != game.deal_number or par_lock(daily=daily) is not None:
        return None
    par = par_result(daily=daily)
    if par is None:
        return None
    return {
        "date": daily.date,
        "par": par,
        "moves": game.moves - par.moves if game.won else None,
        "score": game.score - par.score,
    }


def _day_tv(day: datetime.date) -> dict[str, Any] | None:
    """The best games of a closed day, to watch as replays: the top 3 by score and the
    fewest moves among the won games (the boards' first entries), and the par line."""
    if day >= today():
        return None
    by_score = leaderboard_page(date=day, order=Board.SCORE, limit=3)["entries"]
    fewest = leaderboard_page(date=day, order=Board.MOVES, limit=1)["entries"]
    return {"by_score": by_score, "fewest_moves": fewest[0] if fewest else None}


def _game_card_title(game: Any, facts: dict[str, Any]) -> str:
    """The headline a shared game unfurls with: who, won or not, which day."""
    words = {"player": game.player.get_username(), "number": facts["day_number"]}
    if facts["date"] is None:
        return _("Game by %(player)s") % words
    if facts["won"]:
        return _("%(player)s won Easy Harp Daily #%(number)s") % words
    return _("%(player)s played Easy Harp Daily #%(number)s") % words


def game_card(request: HttpRequest, game_id: int) -> HttpResponse:
    """A game's result as its share link shows it: the share picture, the grid of its
    course and its facts (won, score and moves against par, rank, streak, assisted),
    never its log. Its replay is a link, behind the no-spoiler lock while the day runs
    for a viewer who has not played it."""
    game = found(game_get, game_id=game_id)
    facts = game_share(game=game)
    lines = share_lines(facts)
    title = _game_card_title(game, facts)
    when = facts["date"] or game.created_at.date()
    context = {
        "game": game,
        "facts": facts,
        "heading": share_title(facts),
        "title": title,
        "lines": lines,
        "grid": [
            ([SQUARE_KINDS[square] for square in squares], words)
            for squares, words in grid_rows(facts["course"])
        ],
        "lock": game_lock(game=game, viewer=request.user),
        "config": page_config(request),
        "og": open_graph(
            request,
            title=title,
            description=" · ".join([when.isoformat(), *lines]),
            image=reverse("card-game", args=[game.pk]),
        ),
    }
    return render(request, "leaderboards/game_card.html", context)


def _day_of_page(text: str) -> datetime.date:
    try:
        return day_from_text(text)
    except ValueError:
        raise Http404(_("There is no such day.")) from None


def leaderboard(
    request: HttpRequest, date: str | None = None, *, friends: Members | None = None
) -> HttpResponse:
    """A day's board by score or by moves, kept live by the page script; with
    `?scope=friends`, the signed-in player's friends board (`friends`: who they are,
    the leagues' read, which the wiring passes; without it the day's board)."""
    current = today()
    day = _day_of_page(date) if date else current
    if day > current:
        raise Http404(_("That day has not come yet."))
    order = request.GET.get("order", Board.SCORE)
    if order not in Board.values:
        order = Board.SCORE
    daily = daily_deal_or_404(day)
    narrowed = False
    extra: dict[str, str] = {}
    around = None
    off_board = None
    if request.GET.get("scope") == "friends" and friends and request.user.is_authenticated:
        narrowed = True
        viewer = request.user.pk
        audience = friends(viewer)
        page = leaderboard_among(date=day, order=order, audience=audience, mine=(viewer,))
        me = page.pop("mine")[viewer]
        # Below the ranked rows: the friends who used a hint, and who has not played.
        off_board = audience_off_board(date=day, audience=audience, exclude=(viewer,))
        extra["board_socket"] = (
            f"/ws/daily/{day.isoformat()}/leaderboard/?order={order}&scope=friends"
        )
    else:
        page, me = _board(day, order, request.user)
        if me is not None and request.user.is_authenticated:
            around = leaderboard_around(date=day, order=order, player=request.user, limit=AROUND_ME)
    previous_day, next_day = daily_deal_neighbours(date=day, until=current)
    replays_locked = day_lock(date=day, viewer=request.user)
    # A day that is over shows its results (final once it has closed) and spreads.
    results = day_results(date=day) if day != current else None
    context = {
        "day": day,
        "tv": _day_tv(day),
        "par_line": bool(daily.par_log),
        "replays_locked": replays_locked,
        "is_today": day == current,
        "day_over": day != current,
        "results": results,
        "score_bars": distribution_bars(
            [(row["score"], row["players"]) for row in results["score_distribution"]]
        )
        if results
        else [],
        "moves_bars": distribution_bars(
            [(row["moves"], row["players"]) for row in results["moves_distribution"]]
        )
        if results
        else [],
        "order": order,
        "friends": narrowed,
        "off_board": off_board,
        "deal_code": daily.deal_code,
        "par": daily.par,
        "page": page,
        "me": me,
        "around": around["entries"] if around else [],
        "previous_day": previous_day,
        "next_day": next_day,
        "recent_days": [served.date for served in daily_deals_served(until=current)[:RECENT_DAYS]],
        "config": page_config(
            request,
            date=day.isoformat(),
            order=order,
            limit=100,
            replays_locked=replays_locked is not None,
            **extra,
        ),
        "og": open_graph(
            request,
            title=_("Easy Harp Daily %(date)s") % {"date": day.isoformat()},
            description=ngettext(
                "%(count)s player on the board.", "%(count)s players on the board.", page["total"]
            )
            % {"count": page["total"]},
            image=reverse("card-day", args=[day.isoformat()]),
        ),
    }
    return render(request, "leaderboards/leaderboard.html", context)


def _record_lines(stats: dict[str, Any]) -> list[str]:
    """A record in a few lines (the player card)."""
    lines = [
        _("%(won)s won of %(played)s played") % {"won": stats["won"], "played": stats["played"]},
        _("Streak %(current)s, best %(best)s")
        % {"current": stats["current_streak"], "best": stats["max_streak"]},
    ]
    if stats["best_score"] is not None:
        lines.append(_("Best score %(score)s") % {"score": stats["best_score"]})
    return lines


def player(request: HttpRequest, username: str, origins: Origins = no_origins) -> HttpResponse:
    """A player's record, daily results and recent games (each with what it was played
    in, as `origins` says: `leaderboards.urls.board_urls`)."""
    user = found(player_get, username=username)
    stats = player_stats(player=user)
    month = today().replace(day=1)
    badges = player_badges(player=user, month=month)
    # While a day runs, its games' replays are shown only to who has played it.
    locks = replay_locks(viewer=request.user)
    games = list(player_games(player=user, limit=50))
    locked = {game.pk for game in games if game_lock(game=game, viewer=request.user, locks=locks)}
    played_in = game_origins(games=games, origins=origins)
    own = request.user.pk == user.pk
    context = {
        "player": user,
        "own": own,
        "stats": stats,
        "standing": standing_text(
            rank=stats["percentile_rank"],
            total=stats["percentile_players"],
            percentile=stats["percentile"],
        )
        if stats["percentile"] is not None
        else None,
        "win_percent": round(100 * stats["win_rate"]) if stats["win_rate"] is not None else None,
        "bars": moves_over_par_bars(stats["moves_vs_par"]),
        "badges": badges,
        "badges_month": month,
        "earned_before": [badge for badge in badges["earned"] if badge["month"] != badges["month"]],
        "days": player_board_results(player=user, limit=30, held=own),
        "games": games,
        # Each game with what it was played in, when an app above games says (a race).
        "game_rows": [(game, played_in.get(game.pk)) for game in games],
        "locked_games": locked,
        # Their ranked attempt of today, live, for a viewer the no-spoiler rule lets see it.
        "watchable": attempt_watchable(player=user, viewer=request.user),
        # Only the player sees which of their games wait for review.
        "held": {game.pk for game in games if game_held_for(game=game, viewer=request.user)},
        "config": page_config(request),
        "og": open_graph(
            request,
            title=user.get_username(),
            description=" · ".join(_record_lines(stats)),
            image=reverse("card-player", args=[user.get_username()]),
        ),
    }
    return render(request, "leaderboards/player.html", context)


def _month_of_page(text: str | None, default: datetime.date) -> datetime.date:
    """The first day of the month written `YYYY-MM` (`default`'s month for none), or a 404."""
    if text is None:
        return default.replace(day=1)
    try:
        return day_from_text(f"{text}-01")
    except ValueError:
        raise Http404(_("There is no such month.")) from None


def archive(request: HttpRequest, month: str | None = None) -> HttpResponse:
    """A month of days as a calendar: each past day's deal (playable as practice) and
    board, today's deal (the day's ranked game), and the signed-in player's results
    marked and counted, today's too. Without a month: this month."""
    current = today()
    served_from = daily_deal_first_date()
    first = _month_of_page(month, max(current, served_from))
    if first > current or first < served_from.replace(day=1):
        raise Http404(_("There is no archive for that month."))
    last = first.replace(day=calendar.monthrange(first.year, first.month)[1])
    player_ = request.user if request.user.is_authenticated else None
    days = {
        day["date"]: day
        for day in days_between(
            first=max(first, served_from),
            last=min(last, current),
            player=player_,
        )
    }
    weeks = []
    for week in calendar.Calendar(firstweekday=0).monthdatescalendar(first.year, first.month):
        weeks.append(
            [
                {"date": date, "day": days.get(date.isoformat()), "today": date == current}
                if date.month == first.month
                else None
                for date in week
            ]
        )
    previous = (first - datetime.timedelta(days=1)).replace(day=1)
    following = last + datetime.timedelta(days=1)
    context = {
        "month": first,
        "weeks": weeks,
        "weekdays": [
            date_format(datetime.date(2026, 11, 30) + datetime.timedelta(days=n), "D")
            for n in range(7)
        ],
        "previous": previous if previous >= served_from.replace(day=1) else None,
        "following": following if following <= current else None,
        "played": sum(1 for day in days.values() if day["me"]),
        "won": sum(1 for day in days.values() if day["me"] and day["me"]["won"]),
        "config": page_config(request),
    }
    return render(request, "leaderboards/archive.html", context)


# --- Share pictures ------------------------------------------------------------------------


def _card_response(
    request: HttpRequest,
    key: str,
    title: str,
    lines: list[str],
    *,
    max_age: int,
    course: Sequence[int] | None = None,
) -> HttpResponse:
    """The PNG card of `title` and `lines` (`key` names what it shows), from the
    `evictable` cache, or drawn (and cached) when the client address still may.

    The cache key holds every word the picture shows, so a cached picture is
    never stale; drawing is the only cost, and it is limited per client address.
    The footer is the site's configured address, not the request's Host, so
    that no variant of the Host draws and stores the picture again.
    """
    footer = site_host()
    words = f"{CARD_VERSION}:{get_language()}:{key}:{title}:{lines}:{footer}:{course}"
    cache_key = f"card:{hashlib.sha256(words.encode()).hexdigest()}"
    # Without Redis the pictures are drawn every time (still limited per
    # address); /healthz/ reports the outage.
    png = None
    with contextlib.suppress(RedisError, OSError):
        png = caches["evictable"].get(cache_key)
    if png is None:
        wait = limit_refusal(request, "card")
        if wait is not None:
            response = HttpResponse(status=429)
            response["Retry-After"] = str(max(1, math.ceil(wait)))
            return response
        png = card_png(title, lines, footer, course)
        with contextlib.suppress(RedisError, OSError):
            caches["evictable"].set(cache_key, png, timeout=7 * 24 * 3600)
    response = HttpResponse(png, content_type="image/png")
    response["Cache-Control"] = f"public, max-age={max_age}"
    return response


def card_game(request: HttpRequest, game_id: int) -> HttpResponse:
    """The result card of a game, drawn from its share facts only (no card or action
    of its log): title, result lines and the grid of its course."""
    game = found(game_get, game_id=game_id)
    facts = game_share(game=game)
    return _card_response(
        request,
        f"game:{game.pk}",
        share_title(facts),
        share_lines(facts),
        max_age=300,
        course=facts["course"],
    )


def card_day(request: HttpRequest, date: str) -> HttpResponse:
    """The card of a day: its players, winners and winner."""
    day = _day_of_page(date)
    if day > today():
        raise Http404(_("That day has not come yet."))
    daily = daily_deal_or_404(day)
    results = day_results(date=day)
    winners = day_winners(date=day, limit=1)
    title = _("Easy Harp Daily %(date)s") % {"date": day.isoformat()}
    lines = [
        ngettext("%(count)s player", "%(count)s players", results["players"])
        % {"count": results["players"]},
        _("%(won)s won") % {"won": results["won"]},
    ]
    if daily.par is not None:
        lines.append(_("Par %(par)s moves") % {"par": daily.par})
    if winners:
        lines.append(
            _("First: %(player)s, score %(score)s")
            % {"player": winners[0]["player"], "score": winners[0]["score"]}
        )
    return _card_response(
        request, f"day:{day}", title, lines, max_age=3600 if results["final"] else 300
    )


def card_player(request: HttpRequest, username: str) -> HttpResponse:
    """The card of a player's record."""
    user = found(player_get, username=username)
    lines = _record_lines(player_stats(player=user))
    return _card_response(request, f"player:{user.pk}", user.get_username(), lines, max_age=300)
