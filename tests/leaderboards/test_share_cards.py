"""Share pictures and the Open Graph tags that point at them: drawn once and cached,
the drawing limited per client address, the pages' tags naming them."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import Client

from easyharp_site.site import site_host
from games.models import DailyDeal
from leaderboards import cards, tasks, web
from leaderboards.cards import card_png
from leaderboards.models import DayResult
from tests.fixtures import WIN_LOG, play_assisted, play_ranked

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def card_limit(settings):
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {**rest["DEFAULT_THROTTLE_RATES"], "card": "2/min"}
    settings.REST_FRAMEWORK = rest


def test_a_card_is_a_png_drawn_once_then_served_from_the_cache(daily, alice, card_limit):
    game = play_ranked(alice, WIN_LOG)
    client = Client()
    first = client.get(f"/cards/games/{game.pk}.png")
    assert first.status_code == 200 and first["Content-Type"] == "image/png"
    assert first.content.startswith(b"\x89PNG")
    for _ in range(5):  # cached: the limit counts drawings only
        again = client.get(f"/cards/games/{game.pk}.png")
        assert again.status_code == 200 and again.content == first.content


def test_an_assisted_games_card_says_so_and_shows_no_rank(daily, alice, make_player, monkeypatch):
    play_ranked(make_player("bob"), "S")
    game = play_assisted(alice, WIN_LOG)
    drawn: list[list[str]] = []
    draw = web.card_png

    def card_png(title: str, lines: list[str], footer: str = "", course=None) -> bytes:
        drawn.append(list(lines))
        return draw(title, lines, footer, course)

    monkeypatch.setattr(web, "card_png", card_png)
    for language, assisted in (
        ("en", "Assisted: a hint was used"),
        ("es", "Con ayuda: se usó una pista"),
    ):
        answer = Client().get(f"/cards/games/{game.pk}.png", HTTP_ACCEPT_LANGUAGE=language)
        assert answer.status_code == 200 and answer.content.startswith(b"\x89PNG")
        lines = drawn[-1]
        assert assisted in lines
        assert not any("rank" in line or "puesto" in line for line in lines), lines


def test_accented_letters_keep_their_accents_in_the_sites_font():
    assert cards.FONT_FILE.is_file(), "install Debian's fonts-dejavu-core, as the image does"
    assert card_png("Puntuación", ["Con ayuda: se usó una pista"]) != card_png(
        "Puntuacion", ["Con ayuda: se uso una pista"]
    )


def test_without_the_font_accented_letters_are_drawn_without_their_accents(monkeypatch):
    # Pillow's own font has no "ó": it would draw an empty box.
    monkeypatch.setattr(cards, "FONT_FILE", Path("/nonexistent/font.ttf"))
    cards._font.cache_clear()
    try:
        assert card_png("Puntuación", ["Con ayuda: se usó una pista"]) == card_png(
            "Puntuacion", ["Con ayuda: se uso una pista"]
        )
    finally:
        cards._font.cache_clear()


def test_drawing_is_limited_per_client_address(daily, alice, make_player, card_limit):
    client = Client()
    names = ["alice", *(make_player(f"p{n}").username for n in range(2))]
    answers = [client.get(f"/cards/players/{name}.png").status_code for name in names]
    assert answers == [200, 200, 429]
    other = Client(REMOTE_ADDR="192.0.2.9")
    assert other.get(f"/cards/players/{names[2]}.png").status_code == 200


def test_the_pages_carry_open_graph_and_twitter_tags_with_their_picture(daily, alice):
    game = play_ranked(alice, WIN_LOG)
    client = Client()
    for path, picture in [
        (f"/replays/{game.pk}/", f"/cards/games/{game.pk}.png"),
        (f"/leaderboard/{daily.date.isoformat()}/", f"/cards/days/{daily.date.isoformat()}.png"),
        ("/players/alice/", "/cards/players/alice.png"),
    ]:
        page = client.get(path).content.decode()
        assert f'<meta property="og:image" content="{settings.SITE_URL}{picture}">' in page
        assert '<meta name="twitter:card" content="summary_large_image">' in page
        assert client.get(picture).status_code == 200
        # The replay's log is on its page, never in the tags that unfurl it.
        assert game.log not in page.split("<body")[0]


def test_unknown_games_days_and_players_have_no_card(db, today):
    client = Client()
    assert client.get("/cards/games/99999.png").status_code == 404
    assert client.get("/cards/days/2999-01-01.png").status_code == 404
    assert client.get("/cards/players/nobody.png").status_code == 404


def test_the_close_job_closes_the_days_over_once(db, today):
    DailyDeal.objects.create(date=today - datetime.timedelta(days=1), number=3)
    DailyDeal.objects.create(date=today, number=4)
    assert tasks.days_close() == "1 day(s) closed"
    closed = list(DayResult.objects.values_list("date", "closed_at"))
    # Run again (a retry, or the next turn): the closed day is left alone.
    assert tasks.days_close() == "0 day(s) closed"
    assert list(DayResult.objects.values_list("date", "closed_at")) == closed
    assert [date for date, _ in closed] == [today - datetime.timedelta(days=1)]


# Hosts that ALLOWED_HOSTS lets through, each a different Host header.
HOST_VARIANTS = ["127.0.0.1:1", "127.0.0.1:35", "127.0.0.1:99999", "localhost:00080", "127.0.0.1."]


def test_every_host_variant_gets_the_one_card_of_a_game(daily, alice, monkeypatch):
    game = play_ranked(alice, WIN_LOG)
    drawn: list[str] = []
    draw = web.card_png

    def card_png(title: str, lines: list[str], footer: str = "", course=None) -> bytes:
        drawn.append(footer)
        return draw(title, lines, footer, course)

    monkeypatch.setattr(web, "card_png", card_png)
    pictures = {
        Client(HTTP_HOST=host).get(f"/cards/games/{game.pk}.png").content for host in HOST_VARIANTS
    }

    assert len(pictures) == 1
    # Drawn, and stored, once: with the site's own address in its footer.
    assert drawn == [site_host()]


def test_every_absolute_link_names_the_sites_address_whatever_the_host(daily, alice):
    game = play_ranked(alice, WIN_LOG)
    day = daily.date.isoformat()
    seen: dict[str, set[str]] = {}
    for host in HOST_VARIANTS:
        client = Client(HTTP_HOST=host)
        client.force_login(alice)  # the game's player sees it while its day runs
        for path in (f"/replays/{game.pk}/", f"/leaderboard/{day}/", "/players/alice/"):
            head = client.get(path).content.decode().split("<body")[0]
            links = re.findall(r'<meta property="og:(?:image|url)" content="([^"]+)">', head)
            seen.setdefault(path, set()).add(" ".join(links))
        share = client.get(f"/api/games/{game.pk}/share/").json()
        seen.setdefault("share", set()).add(share["url"])
        detail = client.get(f"/api/games/{game.pk}/").json()
        seen.setdefault("game", set()).add(detail["url"])

    assert all(len(links) == 1 for links in seen.values()), seen
    for links in seen.values():
        for link in " ".join(links).split():
            assert link.startswith(f"{settings.SITE_URL}/"), link
