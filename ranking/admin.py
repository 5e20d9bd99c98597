"""Moderation in the Django admin: days, games (void, never delete), the review queue of
flagged games (void or clear in one click), players (ban, lift a ban, with a reason),
and the log of every moderation action (who, when, why)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse

from games.models import Attempt, DailyDeal, FlaggedGame, Game, ModerationAction, ReviewState
from games.review import FLAGS, flag_reasons
from ranking.actions import game_review_clear, game_void, player_ban, player_unban


class NoAddNoDelete(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Deleting would leave stale board entries or erase what moderators did.
        return False


@admin.register(DailyDeal)
class DailyDealAdmin(NoAddNoDelete):
    list_display = ["date", "number", "par", "created_at"]
    date_hierarchy = "date"
    # A stored day never changes: players have played it.
    readonly_fields = ["date", "number", "par", "par_log", "created_at"]


def _moderator(request: HttpRequest) -> User | None:
    user = request.user
    return user if isinstance(user, User) else None


def _ask_why(
    model_admin: admin.ModelAdmin,
    request: HttpRequest,
    queryset: QuerySet[Any],
    *,
    action: str,
    title: str,
    act: Callable[[Any, str], bool],
) -> TemplateResponse | None:
    """Ask why on a page of its own, then `act(item, reason)` on each selected item.

    Every moderation action is logged with its reason, so there is none
    without one.
    """
    reason = request.POST.get("reason", "").strip()
    if "apply" in request.POST and reason:
        changed = sum(act(item, reason) for item in queryset)
        model_admin.message_user(request, f"{title}: {changed} changed.", messages.SUCCESS)
        return None
    context = {
        **model_admin.admin_site.each_context(request),
        "title": title,
        "queryset": queryset,
        "action": action,
        "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        "missing_reason": "apply" in request.POST,
        "opts": model_admin.model._meta,
    }
    return TemplateResponse(request, "admin/games/moderation_reason.html", context)


@admin.register(Game)
class GameAdmin(NoAddNoDelete):
    list_display = [
        "id",
        "player",
        "deal_number",
        "score",
        "moves",
        "won",
        "daily",
        "ranked",
        "assisted",
        "duration_ms",
        "review_state",
        "created_at",
        "voided_at",
    ]
    list_filter = [
        "ranked",
        "assisted",
        "review_state",
        "won",
        "daily__date",
        ("voided_at", admin.EmptyFieldListFilter),
    ]
    search_fields = ["player__username", "=id"]
    list_select_related = ["player", "daily"]
    date_hierarchy = "created_at"
    readonly_fields = [field.name for field in Game._meta.fields if field.name != "void_reason"]
    actions = ["void_games"]

    @admin.action(description="Void the selected games (they leave every board)")
    def void_games(self, request: HttpRequest, queryset: QuerySet[Game]) -> TemplateResponse | None:
        def void(game: Game, reason: str) -> bool:
            if game.is_voided:
                return False
            game_void(game=game, reason=reason, moderator=_moderator(request))
            return True

        return _ask_why(self, request, queryset, action="void_games", title="Void games", act=void)


@admin.register(Attempt)
class AttemptAdmin(NoAddNoDelete):
    """Each player's ranked attempt of a day: read only (the services keep them)."""

    list_display = ["id", "player", "daily", "started_at", "assisted", "saved_at", "status"]
    list_filter = ["assisted", "daily__date"]
    search_fields = ["player__username", "=id"]
    list_select_related = ["player", "daily", "game"]
    readonly_fields = [field.name for field in Attempt._meta.fields]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class FlagFilter(admin.SimpleListFilter):
    title = "flagged for"
    parameter_name = "flag"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(code, name) for code, (name, _) in FLAGS.items()]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        return queryset.filter(review_flags__contains=value) if value else queryset


@admin.register(FlaggedGame)
class ReviewQueueAdmin(NoAddNoDelete):
    """Ranked games whose plausibility signals were flagged, waiting for a moderator.

    Flags alone change no board: voiding does (one click), clearing takes the
    game out of the queue. Both are logged.
    """

    list_display = [
        "id",
        "player",
        "daily",
        "score",
        "moves",
        "won",
        "duration_ms",
        "review_state",
        "reasons",
        "copy_of",
        "copy_similarity",
        "created_at",
    ]
    list_filter = [FlagFilter, "review_state", "won", "daily__date"]
    list_select_related = ["player", "daily", "copy_of"]
    search_fields = ["player__username", "=id"]
    readonly_fields = [field.name for field in Game._meta.fields]
    actions = ["void_flagged", "clear_flagged"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return (
            super()
            .get_queryset(request)
            .filter(review_state__in=[ReviewState.FLAGGED, ReviewState.HELD])
        )

    @admin.display(description="why flagged")
    def reasons(self, game: Game) -> str:
        return "; ".join(flag_reasons(game.flags, game.review))

    @admin.action(
        description="Void the selected games (cheating: they leave every board)",
        permissions=["change"],
    )
    def void_flagged(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for game in queryset:
            game_void(
                game=game,
                reason=f"review queue: {game.review_flags}",
                moderator=_moderator(request),
            )
        self.message_user(request, f"{len(queryset)} game(s) voided.", messages.SUCCESS)

    @admin.action(
        description="Clear the selected games (plausible: they leave the queue, held ones "
        "take their place on the boards)",
        permissions=["change"],
    )
    def clear_flagged(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for game in queryset:
            game_review_clear(
                game=game,
                reason=f"review queue: {game.review_flags} judged plausible",
                moderator=_moderator(request),
            )
        self.message_user(request, f"{len(queryset)} game(s) cleared.", messages.SUCCESS)


# Players: Django's own user admin, plus banning and lifting a ban. `is_active`
# changes only through those actions, so that the boards always follow it.
admin.site.unregister(get_user_model())


@admin.register(get_user_model())
class PlayerAdmin(UserAdmin):
    actions = ["ban_players", "unban_players"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return [*super().get_readonly_fields(request, obj), "is_active"]

    @admin.action(description="Ban the selected players (they leave every board)")
    def ban_players(self, request: HttpRequest, queryset: QuerySet[Any]) -> TemplateResponse | None:
        def ban(player: Any, reason: str) -> bool:
            return player_ban(player=player, moderator=_moderator(request), reason=reason)

        return _ask_why(self, request, queryset, action="ban_players", title="Ban players", act=ban)

    @admin.action(description="Lift the ban of the selected players (their games come back)")
    def unban_players(
        self, request: HttpRequest, queryset: QuerySet[Any]
    ) -> TemplateResponse | None:
        def unban(player: Any, reason: str) -> bool:
            return player_unban(player=player, moderator=_moderator(request), reason=reason)

        return _ask_why(
            self, request, queryset, action="unban_players", title="Lift bans", act=unban
        )


@admin.register(ModerationAction)
class ModerationActionAdmin(NoAddNoDelete):
    """The log of what moderators did: read only, kept for ever."""

    list_display = ["created_at", "kind", "player", "game", "moderator", "reason"]
    list_filter = ["kind"]
    search_fields = ["player__username", "moderator__username", "reason"]
    list_select_related = ["player", "game", "moderator"]
    date_hierarchy = "created_at"

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
