from django.apps import AppConfig


class LeaguesConfig(AppConfig):
    name = "leagues"
    verbose_name = "Friends and leagues"

    def ready(self) -> None:
        # The receivers of games' and accounts' signals, and the audiences the
        # boards can be narrowed to (a player's friends, a league's members).
        from leaderboards.audiences import audience_register
        from leagues import receivers  # noqa: F401
        from leagues.selectors import friends_sql, league_members_sql

        audience_register(kind="friends", members=friends_sql)
        audience_register(kind="league", members=league_members_sql)
