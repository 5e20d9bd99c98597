"""The API's text fields: what the schema says of a text holds of the text as sent."""

from __future__ import annotations

import pytest
from rest_framework import serializers

from easyharp_site.fields import TextField


class Named(serializers.Serializer):
    name = TextField(max_length=5)


@pytest.mark.parametrize("sent", ["\tabcde", "abcde ", " abcde "])
def test_a_text_over_its_length_is_refused_though_trimmed_it_would_fit(sent: str) -> None:
    data = Named(data={"name": sent})

    assert not data.is_valid()
    assert data.errors["name"][0].code == "max_length"


def test_a_text_within_its_length_is_trimmed() -> None:
    data = Named(data={"name": " abc "})

    assert data.is_valid(), data.errors
    assert data.validated_data["name"] == "abc"


def test_a_number_is_not_text() -> None:
    data = Named(data={"name": 12})

    assert not data.is_valid()
    assert data.errors["name"][0].code == "not_text"
