"""Races in the admin: moderators see them and their players."""

from __future__ import annotations

from django.contrib import admin

from races.models import Race, Racer

RACER_FIELDS = ("player", "joined_at", "score", "moves", "on_foundations", "won", "left_at", "rank")


class RacerInline(admin.TabularInline):
    model = Racer
    extra = 0
    fields = RACER_FIELDS
    readonly_fields = RACER_FIELDS


@admin.register(Race)
class RaceAdmin(admin.ModelAdmin):
    list_display = ["code", "host", "created_at", "starts_at", "ended_at", "end", "winner"]
    search_fields = ["code", "host__username"]
    readonly_fields = ["code", "host", "deal_number", "created_at", "starts_at", "ends_at"]
    inlines = [RacerInline]
