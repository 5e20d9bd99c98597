"""Moderation: days, games (void, never delete) in the Django admin."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from games.models import DailyDeal, Game
from games.services import game_void


@admin.register(DailyDeal)
class DailyDealAdmin(admin.ModelAdmin):
    list_display = ["date", "number", "par", "created_at"]
    date_hierarchy = "date"
    # A stored day never changes: players have played it.
    readonly_fields = ["date", "number", "par", "created_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: DailyDeal | None = None) -> bool:
        return False


@admin.register(Game)
class GameAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "player",
        "deal_number",
        "score",
        "moves",
        "won",
        "daily",
        "created_at",
        "voided_at",
    ]
    list_filter = ["won", "daily__date", ("voided_at", admin.EmptyFieldListFilter)]
    search_fields = ["player__username", "=id"]
    list_select_related = ["player", "daily"]
    date_hierarchy = "created_at"
    readonly_fields = [field.name for field in Game._meta.fields if field.name != "void_reason"]
    actions = ["void_games"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Game | None = None) -> bool:
        # Deleting would leave stale board entries; voiding takes a game off every board.
        return False

    @admin.action(description="Void the selected games (they leave every board)")
    def void_games(self, request: HttpRequest, queryset: QuerySet[Game]) -> None:
        voided = 0
        for game in queryset.filter(voided_at__isnull=True):
            game_void(game=game, reason=f"voided by {request.user.get_username()}")
            voided += 1
        self.message_user(request, f"{voided} game(s) voided.", messages.SUCCESS)
