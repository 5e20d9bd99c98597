from django.apps import AppConfig


class LeaderboardsConfig(AppConfig):
    name = "leaderboards"
    verbose_name = "Leaderboards"

    def ready(self) -> None:
        # Connects the receivers of games' signals (Django's documented place
        # for it: the module is imported once the apps are loaded).
        from leaderboards import receivers  # noqa: F401
