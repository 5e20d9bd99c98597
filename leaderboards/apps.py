from django.apps import AppConfig

from easyharp_site.jobs import jobs_schedule_after_migrate


class LeaderboardsConfig(AppConfig):
    name = "leaderboards"
    verbose_name = "Leaderboards"

    def ready(self) -> None:
        jobs_schedule_after_migrate(self)
        # The boards' writes when games change (`games.derived`), and the
        # receiver of a deleted account: Django's documented place for both.
        from games.derived import derived_stores_register
        from leaderboards import receivers

        derived_stores_register(receivers.BOARDS)
