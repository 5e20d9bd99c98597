"""HTML pages of games: play, rules, examples, FAQ; and what every page shares
(`page_config`).

The pages that show a board or a place on one (home, leaderboard, player,
replay) are the leaderboards'.

The views only gather what a page shows first and hand the rest to the
browser: the play page plays with the JavaScript engine
(`static/games/engine.js`) and submits to the REST API; boards stay current
over the live websocket; replays read their frames from the API. Every string
the scripts show is translated here and rendered into the page as JSON, so
the browser needs no catalogue of its own.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.templatetags.static import static
from django.urls import reverse
from django.utils.translation import get_language, ngettext, pgettext
from django.utils.translation import gettext as _

from easyharp_site.accounts.selectors import account_settings
from easyharp_site.dates import day_from_text, today
from easyharp_site.errors import ServiceError
from easyharp_site.site import site_url
from games import rules
from games.models import DailyDeal
from games.rules import DEAL_REASONS, REASONS, Deal, IllegalActionError, InvalidDealError
from games.selectors import (
    attempt_is_started,
    daily_day_number,
    daily_deal_before,
    daily_deal_get,
    day_lock,
    par_get_unlocked,
    par_lock,
    par_result,
)

T = TypeVar("T")


def plural(counter: str, forms: Callable[[int], str]) -> dict[str, str]:
    """A string with plural forms for the page scripts: `forms(n)` (an
    `ngettext` call) for one and for many, the only two forms English, Spanish
    and Dutch have, and `counter`, the field that counts; `t()` in ui.js picks
    the form with Intl.PluralRules."""
    return {"count": counter, "one": forms(1), "other": forms(2)}


def standing_strings() -> dict[str, str]:
    """The words of a place among a board's players (`{n}`: players, or a percentage).
    A bare percentage reads wrong at the ends ("better than 100%" alone on the board,
    "better than 0%" last), so there the words say the place."""
    return {
        "standing_alone": _("Alone on the board"),
        "standing_best": _("Best of {n}"),
        "standing_last": _("Last of {n}"),
        "standing_better": _("Better than {n}%"),
    }


def standing_key(rank: int, total: int) -> str:
    """Which of `standing_strings` a place takes, as the pages' `standing`
    (games/static/games/daily.js) picks it."""
    if total <= 1:
        return "standing_alone"
    if rank <= 1:
        return "standing_best"
    if rank >= total:
        return "standing_last"
    return "standing_better"


def standing_text(*, rank: int, total: int, percentile: int) -> str:
    """A place among a board's players in words: "Best of 12", "Better than 64%".

    >>> standing_text(rank=3, total=12, percentile=82)
    'Better than 82%'
    """
    key = standing_key(rank, total)
    number = percentile if key == "standing_better" else total
    return standing_strings()[key].replace("{n}", str(number))


def client_strings() -> dict[str, Any]:
    """Every string the page scripts show, in the active language."""
    return {
        # The engine's reasons (marked for translation in games/rules/errors.py),
        # in the player's language; the page fills in their fields.
        "reasons": {code: _(template) for code, template in REASONS.items()},
        # Fields of the reasons: suit names as the engine names them, and places.
        "suits": {
            "spades": _("spades"),
            "hearts": _("hearts"),
            "diamonds": _("diamonds"),
            "clubs": _("clubs"),
        },
        # Cards in the player's words: the rank letters printed on the cards
        # (Dutch cards say B, V, H), and names for screen readers.
        "rank_letters": {
            "A": pgettext("rank letter on a card: ace", "A"),
            "J": pgettext("rank letter on a card: jack", "J"),
            "Q": pgettext("rank letter on a card: queen", "Q"),
            "K": pgettext("rank letter on a card: king", "K"),
        },
        "rank_names": {
            "A": _("ace"),
            "J": _("jack"),
            "Q": _("queen"),
            "K": _("king"),
        },
        "card_name": _("{rank} of {suit}"),
        "card_at": _("{card}, {place}"),
        "column_n": _("column {n}"),
        # Actions written out (replays, and the live region of the play page).
        "card_moved": _("{card} from {source} to {target}"),
        "run_moved": _("{card} and the run on it from {source} to {target}"),
        "stock_done": _("{card} turned up from the stock"),
        "recycle_done": _("The waste turned over into a new stock"),
        "undo_done": _("Undo"),
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
        "follow": _("Follow"),
        "unfollow": _("Unfollow"),
        "follow_player": _("Follow {player}"),
        # A button's name holds its visible word (WCAG 2.5.3): "Unfollow", not "Stop following".
        "unfollow_player": _("Unfollow {player}"),
        "follow_failed": _("That did not work; please try again."),
        # Copy buttons (copy.js), such as a league's invite link.
        "copied": _("Copied to the clipboard."),
        "copy_selected": _("Selected: copy it with your device's copy command."),
        "submitting": _("Submitting your game…"),
        "retrying": _("The network failed; trying again in a moment…"),
        "submitted": _("Game submitted."),
        "submit_failed": _("The game could not be submitted:"),
        "sign_in_to_submit": _(
            "Sign in to submit this game. Your game is kept on this device meanwhile."
        ),
        "result": plural(
            "moves",
            lambda n: ngettext(
                "Your result: score {score}, {moves} move.",
                "Your result: score {score}, {moves} moves.",
                n,
            ),
        ),
        "rank": _("Rank {rank} of {total} on today's board by score."),
        "rank_of": _("{rank} of {total}"),
        **standing_strings(),
        "players_today": plural(
            "count",
            lambda n: ngettext("{count} player today.", "{count} players today.", n),
        ),
        "no_place": _("No column takes this card."),
        "confirm_restart": _("Start this deal again from the beginning?"),
        "confirm_submit": _("Submit this unfinished game? You can keep playing afterwards."),
        "action_n": _("Action {index} of {total}"),
        "start": _("Deal"),
        "pause": _("Pause"),
        "loading": _("Loading…"),
        "load_failed": _("Could not load this page's data."),
        "you_are_ranked": plural(
            "moves",
            lambda n: ngettext(
                "You are ranked {rank} (score {score}, {moves} move).",
                "You are ranked {rank} (score {score}, {moves} moves).",
                n,
            ),
        ),
        "live": _("live"),
        "offline": _("reconnecting…"),
        "no_entries": _("Nobody has played this day yet."),
        "replay": _("replay"),
        "locked": _("locked"),
        "hint_locked": _(
            "Hints on today's deal are given only during your ranked attempt (sign in to "
            "play it) or after it, and to everyone from 00:00 UTC."
        ),
        "replays_locked": _("Replays of today's games open once you have played, or at 00:00 UTC."),
        # The hint (POST /api/hint/): what to play next, or why there is nothing to say.
        "hint_asking": _("Looking for a win from here…"),
        "hint_move": _("Hint: move {card} from {source} to {target}."),
        "hint_stock": _("Hint: turn up a card from the stock."),
        "hint_recycle": _("Hint: turn the waste back over to make a new stock."),
        "hint_moves_to_win": plural(
            "moves",
            lambda n: ngettext(
                "A win is {moves} move away.",
                "A win is {moves} moves away.",
                n,
            ),
        ),
        "foundation_n": _("foundation F{n}"),
        "hint_lost": _("No useful move left: no sequence of actions wins from here."),
        "hint_unknown": _(
            "The hint ran out of time before it found a win from here; try again or play on."
        ),
        "hint_won": _("The game is won; there is nothing left to play."),
        "hint_throttled": _("Too many hints in a short time; wait a minute and ask again."),
        "hint_busy": _("The server is busy finding other hints; ask again in a few seconds."),
        "hint_refused": _("The hint was refused:"),
        "hint_race_running": _(
            "A race is playing this deal right now: its hints wait for the race to end."
        ),
        "hint_log_too_long": _("This game has too many actions for a hint."),
        "hint_not_given": _("No hint could be given for this game; reload the page and ask again."),
        "hint_failed": _("The hint could not be fetched; check the connection and try again."),
        "hint_stale": _("The game moved on while the hint was being found; ask again."),
        # The ranked attempt of the day (/api/daily/{date}/attempt/): one per
        # player and day, timed by the server, off the board once a hint is used.
        "restart_ranked": _(
            "Your ranked attempt goes on to its end: submit it, then play this deal again "
            "as practice."
        ),
        "attempt_started": _("Ranked attempt started: the clock is running."),
        "attempt_resumed": _("Your ranked attempt goes on where you left it."),
        "attempt_stale": _(
            "You played this game further on another device, so it goes on from there."
        ),
        "attempt_done": _(
            "You have played today's ranked attempt. Any other game of this deal is practice."
        ),
        "attempt_day_closed": _("The day is over: this attempt can no longer be ranked."),
        "attempt_start_offline": _(
            "The server cannot be reached: today's ranked game starts when it can be, "
            "once you press Start."
        ),
        "attempt_offline": _(
            "The server cannot be reached, so this game is practice: a ranked game is timed "
            "by the server from its first move. Once you are back online, start the ranked "
            "attempt."
        ),
        "attempt_save_failed": _(
            "Your game could not be saved on the server; it is kept on this device and "
            "saved again in a moment."
        ),
        # Watching a player's ranked attempt live (games/watch.py, watch.js).
        "watchers": plural(
            "count",
            lambda n: ngettext(
                "{count} player is watching live.", "{count} players are watching live.", n
            ),
        ),
        "watch_live": _("Live"),
        "watch_offline": _("Connection lost: reconnecting…"),
        "watch_summary": _("Score {score}, moves {moves}, time {time}."),
        "watch_locked": _(
            "Today's live games open once you have played your own ranked game of today."
        ),
        "watch_none": _("This player has no ranked game today."),
        "watch_full": _("Too many people are watching this game: trying again in a moment."),
        "watch_closed": _("This ranked game is over."),
        "watch_over": _("Finished"),
        "watch_title_over": _("{player}'s ranked game"),
        "watch_replay": _("Watch the replay"),
        "watch_foundations": _("{count} of 104 cards on the foundations"),
        "clock": _("Time {time}"),
        "ranked": _("Ranked"),
        "practice": _("Practice: this game is not ranked on any board."),
        "assisted": _("Assisted: a hint was used, so this game is on no board."),
        "assisted_mark": _("Assisted"),
        "hint_anyway": _("Ask for a hint"),
        "confirm_hint_ranked": _(
            "A hint takes your ranked game off today's boards for good. Ask for a hint anyway?"
        ),
        "confirm_give_up": _(
            "Submit this unfinished game as your ranked attempt? That ends the attempt."
        ),
        "result_time": plural(
            "moves",
            lambda n: ngettext(
                "Your result: score {score}, {moves} move in {time}.",
                "Your result: score {score}, {moves} moves in {time}.",
                n,
            ),
        ),
        "player_banned": _("This account is banned: its games are on no board."),
    }


def page_config(request: HttpRequest, **extra: Any) -> dict[str, Any]:
    """The JSON every page script reads: who is signed in, where the API is, strings."""
    user = request.user
    return {
        "user": user.get_username() if user.is_authenticated else None,
        "language": get_language(),
        "csrf": get_token(request),
        "login_url": reverse("login"),
        "signup_url": reverse("signup"),
        # A signed-in player's game settings follow them from browser to browser.
        "settings": account_settings(player=user) if user.is_authenticated else None,
        "settings_url": reverse("api-settings"),
        "strings": client_strings(),
        **extra,
    }


def open_graph(request: HttpRequest, *, title: str, description: str, image: str) -> dict[str, str]:
    """The Open Graph / Twitter card fields of a page (absolute URLs on the site's address)."""
    return {
        "title": title,
        "description": description,
        "image": site_url(image),
        "url": site_url(request.path),
    }


def found(read: Callable[..., T], /, **kwargs: Any) -> T:
    """What a service or selector returns, or a 404 page with its message when it refuses."""
    try:
        return read(**kwargs)
    except ServiceError as error:
        raise Http404(error.in_language()) from None


def daily_deal_or_404(date: datetime.date) -> DailyDeal:
    """The stored deal of `date`, else a 404 page saying why (not open, not prepared)."""
    return found(daily_deal_get, date=date)


def day_open_graph(request: HttpRequest, *, daily: DailyDeal, title: str) -> dict[str, str]:
    """The Open Graph fields of a page about a day's deal (home, play): its number, its
    par and the day's picture (players, winners so far), never a card of the deal."""
    if daily.par is not None:
        description = _("One deal for everyone today, par %(par)s moves. Play it once, ranked.")
    else:
        description = _("One deal for everyone today. Play it once, ranked.")
    return open_graph(
        request,
        title=title % {"number": daily_day_number(daily.date)},
        description=description % {"par": daily.par},
        image=reverse("card-day", args=[daily.date.isoformat()]),
    )


def play(request: HttpRequest) -> HttpResponse:
    """The game: today's deal, or any deal given as `?deal=CODE`."""
    day = today()
    daily = daily_deal_or_404(day)
    daily_code = daily.deal_code
    requested = request.GET.get("deal", "").strip()
    deal = daily_code
    if requested:
        try:
            deal = Deal.from_code(requested).code
        except InvalidDealError as error:
            # Never the day's deal instead, which would start its one ranked attempt:
            # the engine's reason in the player's words (games/rules/errors.py), and
            # the day's deal offered as a choice.
            refusal: dict[str, Any] = {
                "deal_error": _(DEAL_REASONS[error.code]).format(**error.params),
                "requested": requested,
                "config": page_config(request),
            }
            return render(request, "games/play.html", refusal, status=400)
    # A past day's deal (from the archive, say) is that day's, played as practice.
    past_day = None
    if deal != daily_code:
        past_day = daily_deal_before(number=Deal.from_code(deal).number, before=day)
    is_daily = deal == daily_code
    user = request.user
    signed_in = user.is_authenticated
    started = user.is_authenticated and is_daily and attempt_is_started(player=user, date=day)
    # Today's deal is played ranked first: a signed-in player sees the start step
    # until they press Start (nothing else starts the clock), a visitor a sign-in.
    start_step = signed_in and is_daily and not started
    context = {
        "deal": deal,
        "is_daily": is_daily,
        "start_step": start_step,
        "table_hidden": is_daily and not started,
        "past_day": past_day,
        # The par is a day's: another deal has none to beat.
        "par": daily.par if deal == daily_code else past_day.par if past_day else None,
        "config": page_config(
            request,
            deal=deal,
            daily_deal=daily_code,
            date=day.isoformat(),
            games_url="/api/games/",
            leaderboard_url=f"/api/daily/{day.isoformat()}/leaderboard/",
            hint_url=reverse("api-hint"),
            # Today's ranked attempt: POST starts it, GET reads it, PATCH saves the game.
            attempt_url=reverse("api-daily-attempt", args=[day.isoformat()]),
            # Whether there is one to read: the page asks only then (GET answers
            # 404 before the start, which a browser logs as an error).
            attempt_started=started,
        ),
        "og": day_open_graph(request, daily=daily, title=_("Play Easy Harp Daily #%(number)s")),
    }
    return render(request, "games/play.html", context)


RULES_TEMPLATES = {"es": "games/rules/es.html", "nl": "games/rules/nl.html"}


def rules_page(request: HttpRequest) -> HttpResponse:
    """The short rules of Easy Harp, written for this site in the page's language."""
    language = (get_language() or "en").split("-")[0]
    template = RULES_TEMPLATES.get(language, "games/rules/en.html")
    return render(request, template, {"config": page_config(request)})


STATIC_GAMES = Path(__file__).resolve().parent / "static" / "games"


@cache
def _service_worker_script() -> str:
    """sw.js, preceded by the static files it keeps for offline play and their version."""
    files = sorted(
        path
        for path in STATIC_GAMES.iterdir()
        if path.suffix in {".js", ".css", ".svg"} and path.name != "sw.js"
    )
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    urls = [static(f"games/{path.name}") for path in files]
    return (
        f"self.PRECACHE = {json.dumps(urls)};\n"
        f"self.VERSION = {json.dumps(digest.hexdigest()[:16])};\n"
        + (STATIC_GAMES / "sw.js").read_text()
    )


def service_worker(request: HttpRequest) -> HttpResponse:
    """The service worker, from the site's root so that it controls every page."""
    response = HttpResponse(_service_worker_script(), content_type="text/javascript")
    response["Cache-Control"] = "no-cache"
    return response


def manifest(request: HttpRequest) -> JsonResponse:
    """The web app manifest: the site installs as an app that opens on the day's deal."""
    return JsonResponse(
        {
            "name": _("Easy Harp Daily"),
            "short_name": "Easy Harp",
            "description": _(
                "Easy Harp, a two-deck solitaire: one deal for everyone each day, "
                "live leaderboards and replays."
            ),
            "lang": get_language(),
            "start_url": reverse("play"),
            "scope": "/",
            "display": "standalone",
            "background_color": "#f3f1ea",
            "theme_color": "#174f32",
            # The SVG for browsers that take it; PNGs, rendered from it, for
            # the launchers that do not, and a maskable one (its card inside
            # the safe zone) for the round and squircle masks of Android.
            "icons": [
                {"src": static("games/icon.svg"), "sizes": "any", "type": "image/svg+xml"},
                {"src": static("games/icon-192.png"), "sizes": "192x192", "type": "image/png"},
                {"src": static("games/icon-512.png"), "sizes": "512x512", "type": "image/png"},
                {
                    "src": static("games/icon-maskable-512.png"),
                    "sizes": "512x512",
                    "type": "image/png",
                    "purpose": "maskable",
                },
            ],
        },
        content_type="application/manifest+json",
    )


# The refusals the examples page shows, each on a real position: a deal, the
# log that leads there, and the action tried. The fourth is deal 4 after the
# first 40 actions of a win (its column 1 empty).
REFUSAL_EXAMPLES = [
    ("EH1-N-AAAAAAE", "", "12"),
    ("EH1-N-AAAAAAE", "", "1F"),
    ("EH1-N-AAAAAAE", "", "1F1"),
    (
        "EH1-N-AAAAAAE",
        "4F1 S S S S S S S WF7 S S S S S WF8 S S S WF1 S S S S S S WF2 S S S S S S WF3 1F3 "
        "S S S S S S",
        "21",
    ),
    ("EH1-N-AAAAAAE", "", "W1"),
    ("EH1-N-AAAAAAE", "", "U"),
]


@cache
def refusal_examples() -> list[dict[str, Any]]:
    """Each example's table and the engine's refusal of its action (code and fields)."""
    examples = []
    for deal, log, token in REFUSAL_EXAMPLES:
        game = rules.replay(deal, log)
        table = game.table()
        try:
            game.play(token)
        except IllegalActionError as error:
            examples.append(
                {
                    "deal": deal,
                    "actions": len(log.split()),
                    "token": token,
                    "table": table,
                    "code": error.code,
                    "params": error.params,
                }
            )
        else:
            raise AssertionError(f"{token} after {log!r} is not refused")
    return examples


def examples_page(request: HttpRequest) -> HttpResponse:
    """Refusals shown on real positions, in the player's words."""
    examples = refusal_examples()
    context = {"examples": examples, "config": page_config(request, examples=examples)}
    return render(request, "games/examples.html", context)


def faq_page(request: HttpRequest) -> HttpResponse:
    """Questions players ask: scoring and ties, the par, the ranked attempt, hints,
    finding friends, offline."""
    return render(request, "games/faq.html", {"config": page_config(request)})


def watch_page(request: HttpRequest, username: str) -> HttpResponse:
    """A player's ranked attempt of today, live (watch.js): its progress while it is open,
    its table once it is finished (and always to the player themselves).

    Only for a viewer who may see today's games (the no-spoiler rule): until the
    day closes, one who has finished their own ranked attempt; anyone else gets
    a 403 page saying when, and the socket refuses them anyway.
    """
    day = today()
    context: dict[str, Any] = {"player": username, "date": day}
    if not request.user.is_authenticated:
        context["config"] = page_config(request)
        return render(request, "games/watch.html", {**context, "signed_out": True}, status=401)
    lock = day_lock(date=day, viewer=request.user)
    if lock is not None and request.user.get_username() != username:
        context["config"] = page_config(request)
        return render(request, "games/watch.html", {**context, "lock": lock}, status=403)
    context["config"] = page_config(request, date=day.isoformat(), player=username)
    return render(request, "games/watch.html", context)


def par_replay_page(request: HttpRequest, date: str) -> HttpResponse:
    """A closed day's par line (the solver's win), step by step (replay.js); before
    the day closes, a 403 page saying when it opens, whoever asks."""
    try:
        day = day_from_text(date)
    except ValueError:
        raise Http404(_("There is no such day.")) from None
    daily = daily_deal_or_404(day)
    lock = par_lock(daily=daily)
    if lock is not None:
        context = {"daily": daily, "lock": lock, "config": page_config(request)}
        return render(request, "games/par_locked.html", context, status=403)
    daily = found(par_get_unlocked, date=day)
    context = {
        "daily": daily,
        "par": par_result(daily=daily),
        "config": page_config(
            request, replay_url=reverse("api-daily-par-replay", args=[day.isoformat()])
        ),
    }
    return render(request, "games/par_replay.html", context)
