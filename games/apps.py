from django.apps import AppConfig

from easyharp_site.jobs import jobs_schedule_after_migrate


class GamesConfig(AppConfig):
    name = "games"
    verbose_name = "Games"

    def ready(self) -> None:
        jobs_schedule_after_migrate(self)
