from django.apps import AppConfig

from easyharp_site.jobs import jobs_schedule_after_migrate


class RacesConfig(AppConfig):
    name = "races"
    verbose_name = "Races"

    def ready(self) -> None:
        jobs_schedule_after_migrate(self)
