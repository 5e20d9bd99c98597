"""Leagues in the admin: moderators see them and may delete one."""

from __future__ import annotations

from django.contrib import admin

from leagues.models import League


@admin.register(League)
class LeagueAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "owner", "members", "created_at"]
    search_fields = ["slug", "name", "owner__username"]
    readonly_fields = ["slug", "owner", "invite_code", "members", "created_at"]
