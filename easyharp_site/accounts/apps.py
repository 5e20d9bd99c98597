from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "easyharp_site.accounts"
    label = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        # Every player's name keys are kept with the player, however it is saved.
        from easyharp_site.accounts import receivers  # noqa: F401 - connects the receivers
