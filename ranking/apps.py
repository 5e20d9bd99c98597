from django.apps import AppConfig

from easyharp_site.jobs import jobs_schedule_after_migrate


class RankingConfig(AppConfig):
    name = "ranking"
    verbose_name = "Moderation"

    def ready(self) -> None:
        jobs_schedule_after_migrate(self)
