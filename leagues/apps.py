from django.apps import AppConfig

from easyharp_site.jobs import jobs_schedule_after_migrate


class LeaguesConfig(AppConfig):
    name = "leagues"
    verbose_name = "Friends and leagues"

    def ready(self) -> None:
        jobs_schedule_after_migrate(self)
        # The leagues' writes when games change (`games.derived`, after the
        # boards'), the receiver of a deleted account, and the audiences the
        # boards can be narrowed to (a player's friends, a league's members).
        from games.derived import derived_stores_register
        from leaderboards.audiences import audience_register
        from leaderboards.checks import check_register
        from leagues import receivers
        from leagues.checks import standings_check
        from leagues.selectors import friends_sql, league_members_sql

        derived_stores_register(receivers.STANDINGS)

        audience_register(kind="friends", members=friends_sql)
        audience_register(kind="league", members=league_members_sql)
        # The day points and standings are checked (and mended) with the boards.
        check_register(standings_check)
