"""Django's password validators, saying their refusals and help in the site's words.

Django's Spanish catalogue addresses the player as "usted" ("Su contraseña no
puede..."), where the site says "tú" everywhere, as games do; its Dutch is
fine, but one set of msgids of our own keeps the three languages in one voice.
The checks themselves are Django's, unchanged.
"""

from __future__ import annotations

from django.contrib.auth import password_validation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext


class MinimumLengthValidator(password_validation.MinimumLengthValidator):
    def get_error_message(self) -> str:
        return ngettext(
            "Your password is too short: use at least %(min_length)d character.",
            "Your password is too short: use at least %(min_length)d characters.",
            self.min_length,
        ) % {"min_length": self.min_length}

    def get_help_text(self) -> str:
        return ngettext(
            "Use at least %(min_length)d character.",
            "Use at least %(min_length)d characters.",
            self.min_length,
        ) % {"min_length": self.min_length}


class UserAttributeSimilarityValidator(password_validation.UserAttributeSimilarityValidator):
    def get_error_message(self) -> str:
        return _("Your password is too close to your %(verbose_name)s.")

    def get_help_text(self) -> str:
        return _("Your password must not be close to your name or your e-mail address.")


class CommonPasswordValidator(password_validation.CommonPasswordValidator):
    def get_error_message(self) -> str:
        return _("Your password is one of the most common ones; choose another.")

    def get_help_text(self) -> str:
        return _("Your password must not be a commonly used one.")


class NumericPasswordValidator(password_validation.NumericPasswordValidator):
    def get_error_message(self) -> str:
        return _("Your password is only digits; add letters or other characters.")

    def get_help_text(self) -> str:
        return _("Your password must not be only digits.")
