from django.apps import AppConfig

from easyharp_site.jobs import jobs_schedule_after_migrate


class LeaderboardsConfig(AppConfig):
    name = "leaderboards"
    verbose_name = "Leaderboards"

    def ready(self) -> None:
        jobs_schedule_after_migrate(self)
        # Connects the receivers of games' signals (Django's documented place
        # for it: the module is imported once the apps are loaded).
        from leaderboards import receivers  # noqa: F401
