"""The actions that change what ranks: each one transaction, each call named.

A game is stored by `games`; everything derived from it (the boards, their
mirror in Redis, the players' records, the leagues' settled days, the races a
banned player is in) is kept by the apps above games, and only these actions
change it. Each action runs the games' write, then calls every store it
changes, in one order (the boards, then the leagues, then the races), inside
one `transaction.atomic()` block with the player's row locked: a failure in
any store rolls the whole action back, and what reaches the live boards or
the sockets is sent after the commit.

    game_submit        games.services.game_store
                       leaderboards.changes.game_ranked (record, mirror, entries, live)
    game_void          games.services.game_void_store
                       leaderboards.changes.game_unranked
                       leagues.changes.day_unsettled_by_void
    copies_check,      games.copies.pending_fingerprints_check, or
    unsubmitted_attempts_check       .unsubmitted_attempts_check (a batch a transaction)
                       each copy held: leaderboards.changes.game_unranked
                                       leagues.changes.day_unsettled_by_void
    game_review_clear  games.services.game_review_clear_store
                       a held game: leaderboards.changes.player_reranked
                                    leagues.changes.days_unsettled
    player_ban,        games.services.player_active_store
    player_unban       leaderboards.changes.player_reranked
                       leagues.changes.days_unsettled
                       a ban: races.services.player_banned_from_races
    player_delete      easyharp_site.accounts.deletion.player_erase
                       leaderboards.changes.player_unranked
                       leagues.changes.player_forgotten
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence

from django.contrib.auth.models import User
from django.db import transaction

from easyharp_site import dates
from easyharp_site.accounts import deletion
from games import copies
from games import selectors as game_selectors
from games import services as game_services
from games.models import Game
from leaderboards import changes as boards
from leagues import changes as leagues
from races import services as races


@transaction.atomic
def game_submit(
    *,
    player: User,
    deal: str,
    log: str | Sequence[str],
    idempotency_key: str | None = None,
    times: Sequence[object] | None = None,
    practice: bool = False,
    device: str = "",
    address: str = "",
) -> tuple[Game, bool]:
    """Validate and store a game (`games.services.game_store`), and put a new ranked game
    of the day on its boards; (game, created). A retry of a stored game changes
    nothing. `device` and `address` name where it came from (see `game_store`)."""
    game, created = game_services.game_store(
        player=player,
        deal=deal,
        log=log,
        idempotency_key=idempotency_key,
        times=times,
        practice=practice,
        device=device,
        address=address,
    )
    if created:
        boards.game_ranked(game=game)
    return game, created


def copies_check(*, now: datetime.datetime | None = None) -> int:
    """The copy check of the daily games stored `SETTLE_SECONDS` before `now` or earlier
    (`games.copies.pending_fingerprints_check`); how many it checked. A ranked game
    found to copy another player's (or to play the solver's line) is held: it leaves
    the boards in the check's own transaction, as a void would take it off, until
    a moderator clears it (`game_review_clear`) or voids it."""
    return copies.pending_fingerprints_check(now=now, held=_held_leaves_boards)


def unsubmitted_attempts_check(*, today: datetime.date | None = None) -> int:
    """The copy check of the attempts of the days before `today` (the closed days) that
    were never submitted (`games.copies.unsubmitted_attempts_check`): a ranked game
    that followed one is held, as `copies_check` holds a copy; how many it read."""
    return copies.unsubmitted_attempts_check(
        before=today or dates.today(), held=_held_leaves_boards
    )


def _held_leaves_boards(game: Game) -> None:
    boards.game_unranked(game=game)
    leagues.day_unsettled_by_void(game=game)


@transaction.atomic
def game_void(*, game: Game, reason: str = "", moderator: User | None = None) -> Game:
    """Void a game: it leaves every board at once, a closed day is settled again; logged
    with who and why. Voiding a voided game changes nothing."""
    game, changed = game_services.game_void_store(game=game, reason=reason, moderator=moderator)
    if changed:
        boards.game_unranked(game=game)
        leagues.day_unsettled_by_void(game=game)
    return game


@transaction.atomic
def game_review_clear(*, game: Game, moderator: User | None, reason: str = "") -> Game:
    """Clear a flagged or held game after review: it leaves the queue, and a held one
    takes its place on the boards at once (a flagged one never left them)."""
    game, was_held = game_services.game_review_clear_store(
        game=game, moderator=moderator, reason=reason
    )
    if was_held and game.daily is not None:
        dates = [game.daily.date]
        boards.player_reranked(player=game.player, dates=dates)
        leagues.days_unsettled(dates=dates)
    return game


def _player_reranked(player: User) -> None:
    dates = game_selectors.player_ranked_dates(player=player)
    boards.player_reranked(player=player, dates=dates)
    leagues.days_unsettled(dates=dates)


@transaction.atomic
def player_ban(*, player: User, moderator: User | None, reason: str) -> bool:
    """Ban a player: sign-in and submission stop, their games leave every board at once,
    and they are out of every race not over. Returns False when the player was
    banned already. Logged with who and why."""
    if not game_services.player_active_store(
        player=player, active=False, moderator=moderator, reason=reason
    ):
        return False
    _player_reranked(player)
    races.player_banned_from_races(player=player)
    return True


@transaction.atomic
def player_unban(*, player: User, moderator: User | None, reason: str) -> bool:
    """Lift a player's ban: they may sign in again and their ranked games come back.
    Returns False when the player was not banned. Logged with who and why."""
    if not game_services.player_active_store(
        player=player, active=True, moderator=moderator, reason=reason
    ):
        return False
    _player_reranked(player)
    return True


@transaction.atomic
def player_erase(*, player: User) -> None:
    """Erase a player's account (`easyharp_site.accounts.deletion`): their games leave
    every board and league at once; their replays stay, under an anonymous name.
    Erasing twice changes nothing."""
    if deletion.player_erase(player=player):
        boards.player_unranked(player=player)
        leagues.player_forgotten(player=player)


def player_delete(*, player: User, password: str) -> None:
    """Delete the signed-in player's account, once they confirm their password."""
    deletion.password_confirm(player=player, password=password)
    player_erase(player=player)
