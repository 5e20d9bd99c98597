"""Leaderboard rows in the admin: read only (they follow the games)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from leaderboards.models import BoardBucket, BoardCheck, BoardEntry, BoardTotal


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(BoardEntry)
class BoardEntryAdmin(ReadOnlyAdmin):
    list_display = [
        "date",
        "board",
        "player",
        "score",
        "moves",
        "won",
        "duration_ms",
        "game",
        "submitted_at",
    ]
    list_filter = ["board", "date"]
    search_fields = ["player__username"]
    list_select_related = ["player"]


@admin.register(BoardTotal)
class BoardTotalAdmin(ReadOnlyAdmin):
    list_display = ["date", "board", "players"]
    list_filter = ["board"]


@admin.register(BoardBucket)
class BoardBucketAdmin(ReadOnlyAdmin):
    list_display = ["date", "board", "key1", "players"]
    list_filter = ["board"]


@admin.register(BoardCheck)
class BoardCheckAdmin(ReadOnlyAdmin):
    """The last `check_boards` of each day: what drifted from the games, and whether mended."""

    list_display = ["date", "checked_at", "in_step", "drift", "repaired", "seconds"]
    readonly_fields = ["date", "checked_at", "seconds", "repaired", "drift", "examples"]

    @admin.display(boolean=True, description="In step")
    def in_step(self, check: BoardCheck) -> bool:
        return not check.drift
