"""GET /api/deals/{code}/: a deal with the engine's starting table."""

from __future__ import annotations

import pytest

from games.rules import Deal, Game

pytestmark = pytest.mark.django_db


def test_it_returns_the_engines_starting_table(anon):
    response = anon.get("/api/deals/eh1-n-aaaaaaf/")

    assert response.status_code == 200
    body = response.json()
    assert (body["code"], body["number"]) == ("EH1-N-AAAAAAF", 5)
    assert body["table"] == Game(Deal(5)).table()


def test_deal_1_shows_the_face_up_cards_of_the_rules(anon):
    table = anon.get("/api/deals/EH1-N-AAAAAAB/").json()["table"]

    face_up = [column["up"][-1] for column in table["columns"]]
    assert face_up == ["6D", "9S", "4H", "5C", "8H", "7H", "6H", "3D", "JC"]
    assert table["stock"] == 59


@pytest.mark.parametrize("code", ["EH1-N-AAAAAAA", "EH1-X-AAAAAAB", "EH1-N-AAAAAB", "nonsense"])
def test_an_unreadable_code_is_404_with_the_reason(anon, code):
    response = anon.get(f"/api/deals/{code}/")

    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "invalid_deal"
    assert error["message"]
