"""The examples and FAQ pages in each language, and the installable app's
manifest and service worker as the server sends them."""

from __future__ import annotations

import html
import json

import pytest
from django.contrib.staticfiles import finders
from django.test import Client
from PIL import Image

from games.models import DailyDeal
from games.rules import REASONS
from games.web import REFUSAL_EXAMPLES
from tests.web.test_pages import page_config


@pytest.mark.parametrize("language", ["en", "es", "nl"])
def test_the_examples_show_each_refusal_on_its_position_in_the_players_language(
    client: Client, daily: DailyDeal, language: str
) -> None:
    response = client.get("/examples/", HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200
    assert response.headers["Content-Language"] == language
    examples = page_config(response)["examples"]
    assert [example["token"] for example in examples] == [t for _, _, t in REFUSAL_EXAMPLES]
    assert [example["code"] for example in examples] == [
        "column_refuses",
        "no_foundation_accepts",
        "foundation_refuses",
        "king_only",
        "empty_source",
        "nothing_to_undo",
    ]
    assert all(example["code"] in REASONS for example in examples)
    # The king-only refusal is on a table with an empty column.
    king = examples[3]["table"]["columns"]
    assert any(not column["up"] and not column["down"] for column in king)


@pytest.mark.parametrize(
    ("language", "question"),
    [("en", "Why the par?"), ("es", "¿Por qué el par?"), ("nl", "Waarom de par?")],
)
def test_the_faq_answers_in_each_language(
    client: Client, daily: DailyDeal, language: str, question: str
) -> None:
    response = client.get("/faq/", HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200
    assert question in response.content.decode()


@pytest.mark.parametrize(
    ("language", "question", "answer"),
    [
        ("en", "How do I find my friends?", "type the beginning of a player's name"),
        ("es", "¿Cómo encuentro a mis amigos?", "escribe el principio del nombre de un jugador"),
        ("nl", "Hoe vind ik mijn vrienden?", "typ het begin van de naam van een speler"),
    ],
)
def test_the_faq_says_how_to_find_friends_in_each_language(
    client: Client, daily: DailyDeal, language: str, question: str, answer: str
) -> None:
    page = html.unescape(client.get("/faq/", HTTP_ACCEPT_LANGUAGE=language).content.decode())
    assert question in page
    assert answer in page


def test_the_manifest_opens_the_days_deal(client: Client, daily: DailyDeal) -> None:
    response = client.get("/manifest.webmanifest", HTTP_ACCEPT_LANGUAGE="nl")
    assert response.headers["Content-Type"] == "application/manifest+json"
    manifest = json.loads(response.content)
    assert manifest["start_url"] == "/play/" and manifest["lang"] == "nl"
    assert manifest["display"] == "standalone"
    page = client.get("/").content.decode()
    assert '<link rel="manifest" href="/manifest.webmanifest">' in page
    assert '<link rel="apple-touch-icon" href="/static/games/apple-touch-icon.png">' in page


def test_the_manifests_icons_are_there_at_their_sizes(client: Client, daily: DailyDeal) -> None:
    icons = json.loads(client.get("/manifest.webmanifest").content)["icons"]
    assert {(icon["type"], icon["sizes"], icon.get("purpose", "any")) for icon in icons} == {
        ("image/svg+xml", "any", "any"),
        ("image/png", "192x192", "any"),
        ("image/png", "512x512", "any"),
        ("image/png", "512x512", "maskable"),
    }
    for icon in [*icons, {"src": "/static/games/apple-touch-icon.png", "sizes": "180x180"}]:
        path = finders.find(icon["src"].removeprefix("/static/"))
        assert path is not None, icon["src"]
        if icon["src"].endswith(".png"):
            with Image.open(path) as image:
                assert (image.format, "x".join(map(str, image.size))) == ("PNG", icon["sizes"])


def test_the_service_worker_keeps_every_script_and_style(client: Client) -> None:
    response = client.get("/sw.js")
    assert response.headers["Content-Type"].startswith("text/javascript")
    assert response.headers["Cache-Control"] == "no-cache"
    first = response.content.decode().splitlines()[0]
    kept = json.loads(first.removeprefix("self.PRECACHE = ").removesuffix(";"))
    for name in ["play.js", "engine.js", "ui.js", "settings.js", "site.css", "icon.svg"]:
        assert f"/static/games/{name}" in kept
    assert "/static/games/sw.js" not in kept
