"""Small words of the pages: a player's own profile speaks to them ("Your races"), and
the language menu names each language in its own words, whatever the page's."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from games.models import DailyDeal

pytestmark = pytest.mark.django_db


def test_your_own_profile_says_your_races_and_another_players_their_races(
    client: Client, daily: DailyDeal, make_player
) -> None:
    alice, _ = make_player("alice"), make_player("bob")
    client.force_login(alice)
    own = client.get("/players/alice/").content.decode()
    other = client.get("/players/bob/").content.decode()
    assert re.search(r'id="player-races"[^>]*>Your races<', own)
    assert re.search(r'id="player-races"[^>]*>Their races<', other)
    spanish = client.get("/players/alice/", HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert re.search(r'id="player-races"[^>]*>Tus carreras<', spanish)


@pytest.mark.parametrize("language", ["en", "es", "nl"])
def test_the_language_menu_names_each_language_in_its_own_words(
    client: Client, daily: DailyDeal, language: str
) -> None:
    page = client.get("/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    menu = page.split('<select name="language" id="language">')[1].split("</select>")[0]
    options = re.findall(r'<option value="(\w+)" lang="(\w+)"( selected)?>([^<]+)</option>', menu)
    assert [(code, lang, name) for code, lang, _, name in options] == [
        ("en", "en", "English"),
        ("es", "es", "Español"),
        ("nl", "nl", "Nederlands"),
    ]
    assert [code for code, _, selected, _ in options if selected] == [language]
