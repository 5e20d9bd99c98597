from django.apps import AppConfig

from easyharp_site.jobs import jobs_schedule_after_migrate


class LeaderboardsConfig(AppConfig):
    name = "leaderboards"
    verbose_name = "Leaderboards"

    def ready(self) -> None:
        jobs_schedule_after_migrate(self)
