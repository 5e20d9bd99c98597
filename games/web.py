"""HTML pages: home, play, leaderboard, replay, player, rules, sign up.

The views only gather what a page shows first and hand the rest to the
browser: the play page plays with the JavaScript engine
(`static/games/engine.js`) and submits to the REST API; boards stay current
over the live websocket; replays read their frames from the API. Every string
the scripts show is translated here and rendered into the page as JSON, so
the browser needs no catalogue of its own.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any, TypeVar

from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import get_language, gettext_lazy
from django.utils.translation import gettext as _

from games.exceptions import ServiceError
from games.models import DailyDeal
from games.rules import Deal
from games.selectors import game_get, player_games, player_get
from games.services import daily_deal_get_or_create, player_register
from leaderboards.selectors import (
    leaderboard_around,
    leaderboard_entry,
    leaderboard_page,
    player_board_results,
)

T = TypeVar("T")

BOARD_ORDERS = ("score", "moves")
RECENT_DAYS = 14
AROUND_ME = 11

# The engine's reason codes (games/rules/errors.py, REASONS in engine.js) in
# words a player reads, so a refusal shows in the player's language. The
# fields in braces are the engine's own (`params` on its errors); the page
# fills them with card names as shown on the cards.
REASON_TEXTS = {
    "empty_stock_and_waste": gettext_lazy("The stock and the waste are both empty."),
    "empty_source": gettext_lazy("There is no card to move: {source} is empty."),
    "one_card_at_a_time": gettext_lazy(
        "Only the top card moves between columns; a run moves as a block only when "
        "it starts with a king and goes to an empty column."
    ),
    "king_only": gettext_lazy(
        "An empty column accepts only a king, or a run that starts with a king."
    ),
    "run_only_to_empty": gettext_lazy(
        "{card} heads a run, and a run headed by a king moves only to an empty column."
    ),
    "column_refuses": gettext_lazy(
        "{card} does not go on {target}: a card goes on the next higher rank of the other colour."
    ),
    "foundation_refuses": gettext_lazy(
        "F{foundation} does not accept {card}: it takes the {suit} from the ace up, one at a time."
    ),
    "no_foundation_accepts": gettext_lazy("No foundation accepts {card}."),
    "foundation_to_foundation": gettext_lazy("No card moves from one foundation to another."),
    "waste_is_not_a_destination": gettext_lazy("Nothing can be put on the waste."),
    "same_column": gettext_lazy("A card cannot move to the column it is already in."),
    "nothing_to_undo": gettext_lazy(
        "There is nothing left to undo (undo takes back at most the last 100 actions)."
    ),
    "game_over": gettext_lazy("The game is won; no action is accepted after that."),
    "unreadable_action": gettext_lazy(
        "This is not an action: write S, U or a move such as 37, W3, WF, 3F2 or F27."
    ),
}


def reason_text(code: str) -> str:
    """The player's-language text of an engine reason code (the code itself if unknown)."""
    text = REASON_TEXTS.get(code)
    return str(text) if text is not None else code


def client_strings() -> dict[str, Any]:
    """Every string the page scripts show, in the active language."""
    return {
        "reasons": {code: str(text) for code, text in REASON_TEXTS.items()},
        # Fields of the reasons: suit names as the engine names them, and places.
        "suits": {
            "spades": _("spades"),
            "hearts": _("hearts"),
            "diamonds": _("diamonds"),
            "clubs": _("clubs"),
        },
        "column_n": _("column {n}"),
        "the_waste": _("the waste"),
        "score": _("Score"),
        "moves": _("Moves"),
        "won": _("Won!"),
        "stock": _("Stock"),
        "waste": _("Waste"),
        "face_down": _("face-down card"),
        "reminder": _(
            "One card at a time: only the top card of a column moves. A run moves as a "
            "block only when it starts with a king and goes to an empty column."
        ),
        "submitting": _("Submitting your game…"),
        "retrying": _("The network failed; trying again in a moment…"),
        "submitted": _("Game submitted."),
        "submit_failed": _("The game could not be submitted:"),
        "sign_in_to_submit": _(
            "Sign in to submit this game. Your game is kept on this device meanwhile."
        ),
        "result": _("Your result: score {score}, {moves} moves."),
        "rank": _("Rank {rank} of {total} on today's board by score."),
        "not_daily": _("This deal is not today's deal, so it is not ranked on a board."),
        "no_place": _("No column takes this card."),
        "confirm_restart": _("Start this deal again from the beginning?"),
        "confirm_submit": _("Submit this unfinished game? You can keep playing afterwards."),
        "action_n": _("Action {index} of {total}"),
        "start": _("Deal"),
        "pause": _("Pause"),
        "loading": _("Loading…"),
        "load_failed": _("Could not load this page's data."),
        "you_are_ranked": _("You are ranked {rank} (score {score}, {moves} moves)."),
        "live": _("live"),
        "offline": _("reconnecting…"),
        "no_entries": _("Nobody has played this day yet."),
        "replay": _("replay"),
        # The hint (POST /api/hint/): what to play next, or why there is nothing to say.
        "hint_asking": _("Looking for a win from here…"),
        "hint_move": _("Hint: move {card} from {source} to {target}."),
        "hint_stock": _("Hint: turn up a card from the stock."),
        "hint_recycle": _("Hint: turn the waste back over to make a new stock."),
        "hint_moves_to_win": _("A win is {moves} moves away."),
        "foundation_n": _("foundation F{n}"),
        "hint_lost": _("No useful move left: no sequence of actions wins from here."),
        "hint_unknown": _(
            "The hint ran out of time before it found a win from here; try again or play on."
        ),
        "hint_won": _("The game is won; there is nothing left to play."),
        "hint_throttled": _("Too many hints in a short time; wait a minute and ask again."),
        "hint_refused": _("The hint was refused:"),
        "hint_failed": _("The hint could not be fetched; check the connection and try again."),
        "hint_stale": _("The game moved on while the hint was being found; ask again."),
    }


def _page_config(request: HttpRequest, **extra: Any) -> dict[str, Any]:
    """The JSON every page script reads: who is signed in, where the API is, strings."""
    user = request.user
    return {
        "user": user.get_username() if user.is_authenticated else None,
        "language": get_language(),
        "csrf": get_token(request),
        "login_url": reverse("login"),
        "strings": client_strings(),
        **extra,
    }


def _today() -> datetime.date:
    return timezone.now().date()


def _found(read: Callable[..., T], /, **kwargs: Any) -> T:
    """What a service or selector returns, or a 404 page with its message when it refuses."""
    try:
        return read(**kwargs)
    except ServiceError as error:
        raise Http404(error.message) from None


def _daily_deal(date: datetime.date) -> DailyDeal:
    """The stored deal of `date` (chosen the first time the day is asked for), else 404."""
    return _found(daily_deal_get_or_create, date=date)


def _deal_code(number: int) -> str:
    return Deal(number).code


def _board(date: datetime.date, order: str, player: Any) -> tuple[dict[str, Any], Any]:
    """The first page of a day's board and the signed-in player's own entry."""
    page = leaderboard_page(date=date, order=order, limit=100)
    me = None
    if player.is_authenticated:
        me = leaderboard_entry(date=date, order=order, player=player)
    return page, me


def home(request: HttpRequest) -> HttpResponse:
    """Today's deal, the player's own result and rank, the top 10 live."""
    today = _today()
    daily = _daily_deal(today)
    page, me = _board(today, "score", request.user)
    recent = DailyDeal.objects.filter(date__lte=today).order_by("-date")[1 : RECENT_DAYS + 1]
    context = {
        "today": today,
        "deal_code": _deal_code(daily.number),
        "par": daily.par,
        "top": page["entries"][:10],
        "total": page["total"],
        "me": me,
        "recent_days": [day.date for day in recent],
        "config": _page_config(request, date=today.isoformat(), order="score", limit=10),
    }
    return render(request, "games/home.html", context)


def play(request: HttpRequest) -> HttpResponse:
    """The game: today's deal, or any deal given as `?deal=CODE`."""
    today = _today()
    daily = _daily_deal(today)
    daily_code = _deal_code(daily.number)
    requested = request.GET.get("deal", "").strip()
    deal_error = None
    deal = daily_code
    if requested:
        try:
            deal = Deal.from_code(requested).code
        except ValueError as error:
            deal_error = str(error)
    context = {
        "deal": deal,
        "deal_error": deal_error,
        "is_daily": deal == daily_code,
        # The par is the day's: another deal has none to beat.
        "par": daily.par if deal == daily_code else None,
        "config": _page_config(
            request,
            deal=deal,
            daily_deal=daily_code,
            date=today.isoformat(),
            games_url="/api/games/",
            leaderboard_url=f"/api/daily/{today.isoformat()}/leaderboard/",
            hint_url=reverse("api-hint"),
        ),
    }
    return render(request, "games/play.html", context, status=400 if deal_error else 200)


def _parse_date(text: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise Http404(_("There is no such day.")) from None


def leaderboard(request: HttpRequest, date: str | None = None) -> HttpResponse:
    """A day's board by score or by moves, kept live by the page script."""
    today = _today()
    day = _parse_date(date) if date else today
    if day > today:
        raise Http404(_("That day has not come yet."))
    order = request.GET.get("order", "score")
    if order not in BOARD_ORDERS:
        order = "score"
    daily = _daily_deal(day)
    page, me = _board(day, order, request.user)
    around = None
    if me is not None and request.user.is_authenticated:
        around = leaderboard_around(date=day, order=order, player=request.user, limit=AROUND_ME)
    previous_day = DailyDeal.objects.filter(date__lt=day).order_by("-date").first()
    next_day = DailyDeal.objects.filter(date__gt=day, date__lte=today).order_by("date").first()
    context = {
        "day": day,
        "is_today": day == today,
        "order": order,
        "deal_code": _deal_code(daily.number),
        "par": daily.par,
        "page": page,
        "me": me,
        "around": around["entries"] if around else [],
        "previous_day": previous_day.date if previous_day else None,
        "next_day": next_day.date if next_day else None,
        "recent_days": [
            d.date
            for d in DailyDeal.objects.filter(date__lte=today).order_by("-date")[:RECENT_DAYS]
        ],
        "config": _page_config(request, date=day.isoformat(), order=order, limit=100),
    }
    return render(request, "games/leaderboard.html", context)


def replay(request: HttpRequest, game_id: int) -> HttpResponse:
    """A stored game, step by step from the API's replay frames."""
    game = _found(game_get, game_id=game_id)
    context = {
        "game": game,
        "config": _page_config(request, game=game.pk, replay_url=f"/api/games/{game.pk}/replay/"),
    }
    return render(request, "games/replay.html", context)


def player(request: HttpRequest, username: str) -> HttpResponse:
    """A player's daily results and recent games."""
    user = _found(player_get, username=username)
    context = {
        "player": user,
        "days": player_board_results(player=user, limit=30),
        "games": player_games(player=user, limit=50),
        "config": _page_config(request),
    }
    return render(request, "games/player.html", context)


RULES_TEMPLATES = {"es": "games/rules/es.html", "nl": "games/rules/nl.html"}


def rules_page(request: HttpRequest) -> HttpResponse:
    """The short rules of Easy Harp, written for this site in the page's language."""
    language = (get_language() or "en").split("-")[0]
    template = RULES_TEMPLATES.get(language, "games/rules/en.html")
    return render(request, template, {"config": _page_config(request)})


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
    context = {"form": form, "next": next_url, "config": _page_config(request)}
    return render(request, "registration/signup.html", context)
