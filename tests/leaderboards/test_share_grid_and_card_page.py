"""What a shared game shows: the day's number, the grid of its course and its result,
in text and picture, never a card or an action of its log; and the page its link
leads to, the game's own card, with its Open Graph words."""

from __future__ import annotations

import datetime
import json
import re

import pytest
from django.core.cache import cache
from django.test import Client

from games.rules import Deal
from games.selectors import daily_day_number
from leaderboards import cards, web
from leaderboards.selectors import game_share
from tests.fixtures import STOCK_CYCLE, WIN_LOG, client_for, play_assisted, play_ranked
from tests.paths import ROOT

pytestmark = pytest.mark.django_db

# A card as the logs and the engine write it (rank then suit), or with a suit sign.
CARD = re.compile(r"\b(10|[A2-9TJQK])[SHDC]\b|[♠♥♦♣]")
# The facts a share is made of, and nothing else.
FACT_KEYS = {
    "date",
    "day_number",
    "deal",
    "won",
    "score",
    "moves",
    "par",
    "ranked",
    "assisted",
    "rank",
    "total",
    "final",
    "streak",
    "course",
    "time_ms",
    "undos",
}
# The grid's rows as the server writes them, which the pages' script reads too.
GRIDS = json.loads((ROOT / "tests" / "js" / "grids.json").read_text(encoding="utf-8"))


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    yield
    cache.clear()


def test_a_grid_row_fills_a_square_per_thirteen_cards():
    assert cards.share_grid([0]) == ["⬛" * 8]
    assert cards.share_grid([13]) == ["🟩" + "⬛" * 7]
    assert cards.share_grid([14]) == ["🟩🟨" + "⬛" * 6]
    assert cards.share_grid([103]) == ["🟩" * 7 + "🟨"]
    assert cards.share_grid([104]) == ["🟩" * 8]


def test_a_grid_row_counts_the_cards_put_away_in_its_quarter_alone():
    assert cards.put_away([14, 40, 40, 104]) == [14, 26, 0, 64]
    assert cards.share_grid([13, 26, 26, 104]) == [
        "🟩" + "⬛" * 7,
        "🟩" + "⬛" * 7,
        "⬛" * 8,
        "🟩" * 6 + "⬛" * 2,
    ]


@pytest.mark.parametrize("case", GRIDS, ids=[str(case["course"]) for case in GRIDS])
def test_the_grid_rows_read_as_the_pages_script_reads_them(case):
    assert cards.share_rows(case["course"]) == case["rows"]
    assert [[cards.SQUARE_KINDS[s] for s in row] for row in cards.share_grid(case["course"])] == (
        case["kinds"]
    )
    assert [row.split(" ", 1)[1] for row in case["rows"]] == case["words"]


def test_the_day_number_counts_from_the_first_day_served(settings):
    settings.DAILY_DEAL_FIRST_DATE = datetime.date(2026, 1, 1)
    assert daily_day_number(datetime.date(2026, 1, 1)) == 1
    assert daily_day_number(datetime.date(2026, 12, 2)) == 336
    assert daily_day_number(datetime.date(2027, 1, 1)) == 366


def _log_pairs(log: str) -> set[str]:
    tokens = log.split()
    return {f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)}


def test_the_share_text_holds_no_card_of_the_deal_and_no_part_of_the_log(daily, alice, anon):
    game = play_ranked(alice, WIN_LOG)
    body = anon.get(f"/api/games/{game.pk}/share/").json()
    text = body["text"]

    assert text.startswith(f"Easy Harp Daily #{daily_day_number(daily.date)} · {daily.date}")
    assert body["grid"] == cards.share_grid(game_share(game=game)["course"])
    # Four rows, each its squares then what they count, summing to the whole deck.
    rows = text.splitlines()[1:5]
    assert [row.split(" ", 1)[0] for row in rows] == body["grid"]
    counts = [
        int(
            re.fullmatch(
                r"(?:first|second|third|last) quarter: (\d+) cards? put away", r.split(" ", 1)[1]
            )[1]
        )
        for r in rows
    ]
    assert sum(counts) == 104 and counts == cards.put_away(body["course"])
    assert re.fullmatch(r"Time \d+:\d\d · 0 undos · no hint", text.splitlines()[6])
    assert not CARD.search(text), CARD.search(text)
    # Not two actions of the log in a row, nor any of its longer tokens.
    assert not any(pair in text for pair in _log_pairs(game.log))
    assert not {token for token in game.log.split() if len(token) > 2} & set(text.split())
    # Nor the deal's cards in any other spelling.
    deal = Deal.from_code(game.deal_code)
    assert all(str(card) not in text.split() for card in deal.columns[0])


def test_two_wins_played_differently_share_different_grids(daily, alice, bob, anon):
    quick = play_ranked(alice, WIN_LOG)
    # The same win after three turns of the stock: its first quarter puts one card away.
    slow = play_ranked(bob, STOCK_CYCLE * 3 + WIN_LOG)
    assert quick.won and slow.won
    grids = [anon.get(f"/api/games/{g.pk}/share/").json()["grid"] for g in (quick, slow)]
    assert grids[0] != grids[1]
    texts = [anon.get(f"/api/games/{g.pk}/share/").json()["text"] for g in (quick, slow)]
    assert texts[0].splitlines()[1:5] != texts[1].splitlines()[1:5]
    assert all(not CARD.search(text) for text in texts)


def test_a_loss_and_a_win_share_different_grids_and_undos_are_counted(daily, alice, bob, anon):
    won = play_ranked(alice, WIN_LOG)
    lost = play_ranked(bob, ["S", "S", "U", "S"])
    won_text, lost_text = (
        anon.get(f"/api/games/{g.pk}/share/").json()["text"] for g in (won, lost)
    )
    assert won_text.splitlines()[1:5] != lost_text.splitlines()[1:5]
    assert "1 undo · no hint" in lost_text and "0 undos · no hint" in won_text
    assert "Not won: " in lost_text


@pytest.mark.parametrize(
    ("language", "words"),
    [("es", "último cuarto: "), ("nl", "laatste kwart: ")],
)
def test_the_grid_rows_speak_the_readers_language(daily, alice, anon, language, words):
    game = play_ranked(alice, WIN_LOG)
    text = anon.get(f"/api/games/{game.pk}/share/", HTTP_ACCEPT_LANGUAGE=language).json()["text"]
    assert words in text.splitlines()[4] and "quarter" not in text


def test_the_facts_of_a_share_hold_only_numbers_and_flags(daily, alice):
    game = play_ranked(alice, WIN_LOG)
    facts = game_share(game=game)
    assert set(facts) == FACT_KEYS
    assert len(facts["course"]) == 4 and all(isinstance(n, int) for n in facts["course"])
    for key, value in facts.items():
        assert isinstance(value, (int, bool, str, datetime.date, list, type(None))), key
    assert not CARD.search(repr(facts))
    assert game.log not in repr(facts) and not any(p in repr(facts) for p in _log_pairs(game.log))


def test_the_picture_is_drawn_from_the_share_facts_alone(daily, alice, monkeypatch):
    game = play_ranked(alice, WIN_LOG)
    facts = game_share(game=game)
    drawn = []

    def card_png(title, lines, footer="", course=None):
        drawn.append((title, list(lines), course))
        return b"\x89PNG"

    monkeypatch.setattr(web, "card_png", card_png)
    assert Client().get(f"/cards/games/{game.pk}.png").status_code == 200
    assert drawn == [(cards.share_title(facts), cards.share_lines(facts), facts["course"])]


@pytest.mark.parametrize(
    ("language", "assisted"),
    [("en", "Assisted: a hint was used"), ("es", "Con ayuda"), ("nl", "Met hulp")],
)
def test_an_assisted_game_says_so_in_text_picture_and_card_page(
    daily, alice, anon, monkeypatch, language, assisted
):
    game = play_assisted(alice, WIN_LOG)
    drawn = []
    monkeypatch.setattr(web, "card_png", lambda title, lines, *rest: drawn.append(lines) or b"")
    text = anon.get(f"/api/games/{game.pk}/share/", HTTP_ACCEPT_LANGUAGE=language).json()["text"]
    Client().get(f"/cards/games/{game.pk}.png", HTTP_ACCEPT_LANGUAGE=language)
    page = Client().get(f"/games/{game.pk}/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    assert assisted in text
    assert any(assisted in line for line in drawn[0])
    assert assisted in page and 'id="card-assisted"' in page


def _og(page: str, name: str) -> str:
    found = re.search(rf'<meta property="og:{name}" content="([^"]*)">', page)
    assert found, name
    return found.group(1)


def test_the_shared_link_is_the_players_own_card_page_with_its_result(
    daily, alice, bob, anon, make_player
):
    play_ranked(bob, "S")
    game = play_ranked(alice, WIN_LOG)
    url = anon.get(f"/api/games/{game.pk}/share/").json()["url"]
    assert url.endswith(f"/games/{game.pk}/")

    page = Client().get(f"/games/{game.pk}/").content.decode()
    number = daily_day_number(daily.date)
    assert _og(page, "title") == f"alice won Easy Harp Daily #{number}"
    description = _og(page, "description")
    assert daily.date.isoformat() in description and "rank 1 of 2" in description
    assert f"Won in {game.moves} moves" in description
    # Its picture is this game's, not the day's (nor its leader's).
    assert _og(page, "image").endswith(f"/cards/games/{game.pk}.png")
    assert _og(page, "url").endswith(f"/games/{game.pk}/")
    lost = play_ranked(make_player("carol"), "S")
    lost_page = Client().get(f"/games/{lost.pk}/").content.decode()
    assert _og(lost_page, "title") == f"carol played Easy Harp Daily #{number}"


def test_the_card_page_shows_the_result_never_the_log_and_keeps_the_replay_locked(
    daily, alice, bob
):
    game = play_ranked(alice, WIN_LOG)
    stranger = Client().get(f"/games/{game.pk}/")
    assert stranger.status_code == 200
    page = stranger.content.decode()
    assert 'id="card-grid"' in page and "cards put away</span>" in page
    assert 'id="card-locked"' in page and 'id="card-replay"' not in page
    assert not CARD.search(page.split("<main")[1])
    assert not any(pair in page for pair in _log_pairs(game.log))
    # Its player, and a player who has finished the day, get the replay's link.
    play_ranked(bob, "S")
    for player in (alice, bob):
        client = Client()
        client.force_login(player)
        seen = client.get(f"/games/{game.pk}/").content.decode()
        assert 'id="card-replay"' in seen and 'id="card-locked"' not in seen


def test_a_practice_game_and_a_missing_game(daily, alice):
    client = client_for(alice)
    answer = client.post(
        "/api/games/", {"deal": "EH1-N-AAAAAAB", "log": "S W9"}, format="json"
    ).json()
    page = Client().get(f"/games/{answer['id']}/").content.decode()
    assert "Easy Harp, deal EH1-N-AAAAAAB" in page
    assert _og(page, "title") == "Game by alice"
    assert Client().get("/games/999999/").status_code == 404


@pytest.mark.parametrize("path", ["/", "/play/"])
def test_the_home_and_play_pages_carry_the_days_open_graph_tags(daily, path):
    daily.par = 250
    daily.save()
    page = Client().get(path, HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert f"Easy Harp Daily #{daily_day_number(daily.date)}" in _og(page, "title")
    assert "250" in _og(page, "description")
    assert _og(page, "image").endswith(f"/cards/days/{daily.date.isoformat()}.png")
    assert '<meta name="twitter:card" content="summary_large_image">' in page
