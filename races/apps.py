from django.apps import AppConfig

from easyharp_site.jobs import jobs_schedule_after_migrate


class RacesConfig(AppConfig):
    name = "races"
    verbose_name = "Races"

    def ready(self) -> None:
        jobs_schedule_after_migrate(self)
        # No hint on a deal while a race plays it; a race's game's replay names its race.
        from games.holds import deal_hold_register
        from games.origins import game_origin_register
        from races.selectors import race_deal_hold, race_game_origins

        deal_hold_register(app=self.name, hold=race_deal_hold)
        game_origin_register(app=self.name, origin=race_game_origins)
