from django.apps import AppConfig

from easyharp_site.jobs import jobs_schedule_after_migrate


class RacesConfig(AppConfig):
    name = "races"
    verbose_name = "Races"

    def ready(self) -> None:
        jobs_schedule_after_migrate(self)
        # A race's game's replay names its race.
        from games.origins import game_origin_register
        from races.selectors import race_game_origins

        game_origin_register(app=self.name, origin=race_game_origins)
