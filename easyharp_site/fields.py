"""Request fields every API of the site shares: JSON's own types only, and a
schema that states what the field admits."""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from rest_framework import serializers

# What a text field that may not be blank admits once trimmed: a character
# other than a blank, and no NUL. Stated as a validator so that the OpenAPI
# schema carries it as the field's pattern.
NOT_BLANK = RegexValidator(r"^[^\x00]*[^\x00\s][^\x00]*$", "This field may not be blank.")


class TextField(serializers.CharField):
    """Text as JSON text only: a number or a boolean is refused, not turned into text.

    A field that may not be blank says so in the schema too (at least one
    character other than a blank), unless its own validators state its form.
    """

    default_error_messages = {"not_text": "Must be text."}

    def __init__(self, **kwargs: Any) -> None:
        if not kwargs.get("allow_blank", False) and "validators" not in kwargs:
            kwargs["validators"] = [NOT_BLANK]
            kwargs.setdefault("min_length", 1)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("not_text")
        # The schema's maxLength is of the text as sent: blanks trimmed away do not
        # make a longer text fit.
        if self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return str(super().to_internal_value(data))


class StrictBooleanField(serializers.BooleanField):
    """JSON's true or false only (DRF's own also takes "yes", 1, "0", ...)."""

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer only (DRF's own also takes "18", 18.0 and "18.0")."""

    def to_internal_value(self, data: Any) -> int:
        if not isinstance(data, int) or isinstance(data, bool):
            self.fail("invalid")
        return int(super().to_internal_value(data))


class NumberChoiceField(serializers.ChoiceField):
    """One of the listed whole numbers, as a JSON number only ("5" is refused)."""

    def to_internal_value(self, data: Any) -> Any:
        if type(data) is not int:
            self.fail("invalid_choice", input=data)
        return super().to_internal_value(data)
