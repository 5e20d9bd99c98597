from django.apps import AppConfig

from easyharp_site.jobs import jobs_schedule_after_migrate


class LeaguesConfig(AppConfig):
    name = "leagues"
    verbose_name = "Friends and leagues"

    def ready(self) -> None:
        jobs_schedule_after_migrate(self)
        # The audiences the boards can be narrowed to (a player's friends, a
        # league's members), and a player's circle (who is playing now).
        from leaderboards.audiences import audience_register
        from leagues.selectors import circle_sql, friends_sql, league_members_sql

        audience_register(kind="friends", members=friends_sql)
        audience_register(kind="league", members=league_members_sql)
        audience_register(kind="circle", members=circle_sql)
