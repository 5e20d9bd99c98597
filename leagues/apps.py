from django.apps import AppConfig

from easyharp_site.jobs import jobs_schedule_after_migrate


class LeaguesConfig(AppConfig):
    name = "leagues"
    verbose_name = "Friends and leagues"

    def ready(self) -> None:
        jobs_schedule_after_migrate(self)
