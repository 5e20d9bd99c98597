from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "easyharp_site.accounts"
    label = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        # Connects the receivers of Django's sign-in signal (Django's documented
        # place for it: the module is imported once the apps are loaded).
        from easyharp_site.accounts import receivers  # noqa: F401
