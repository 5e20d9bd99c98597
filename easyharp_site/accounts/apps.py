from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "easyharp_site.accounts"
    label = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        # Connects the receivers: sign-ins stamp their session's generation, and
        # every save of a player keeps their look-alike name keys in step
        # (Django's documented place for it: imported once the apps are loaded).
        from easyharp_site.accounts import receivers  # noqa: F401
