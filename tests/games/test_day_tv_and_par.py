"""The day's TV and its par line: once a day has closed, its best games and the
solver's line are there to watch from the day's page, and a game's replay says how
far it was from the par; nothing of it before the day closes, for anyone."""

from __future__ import annotations

import datetime
import re

import pytest
from django.test import Client

from games import rules
from games.models import DailyDeal
from tests.fixtures import WIN_LOG, client_for, close_day, stored_game, submit_ranked

pytestmark = pytest.mark.django_db

PAR = rules.replay(4, WIN_LOG)


@pytest.fixture
def par_day(daily):
    """Today's deal with the solver's line: the fixture's winning game of deal 4."""
    daily.par_log = " ".join(WIN_LOG)
    daily.par = PAR.moves
    daily.save()
    return daily


def par_paths(day) -> tuple[str, str]:
    date = day.date.isoformat()
    return f"/api/daily/{date}/par/replay/", f"/leaderboard/{date}/par/"


def test_the_par_line_is_locked_for_everyone_while_the_day_runs(alice, par_day):
    submit_ranked(client_for(alice), WIN_LOG)
    api, page = par_paths(par_day)

    for client in (Client(), client_for(alice)):
        response = client.get(api)
        assert response.status_code == 403
        error = response.json()["error"]
        assert error["code"] == "replay_locked"
        assert error["opens_at"] == par_day.closes_at.isoformat().replace("+00:00", "Z")
        assert "steps" not in response.json()
    signed_in = Client()
    signed_in.force_login(alice)
    locked = signed_in.get(page)
    assert locked.status_code == 403
    assert 'id="par-locked"' in locked.content.decode()
    assert "replay.js" not in locked.content.decode()


def test_the_par_line_opens_for_everyone_once_the_day_has_closed(par_day):
    close_day(par_day)
    api, page = par_paths(par_day)

    response = Client().get(api)
    body = response.json()

    assert response.status_code == 200
    assert body["game"] is None
    assert [step["token"] for step in body["steps"]] == WIN_LOG
    assert body["steps"][-1]["won"] is True
    assert response["Cache-Control"] == "public, max-age=86400"
    shown = Client().get(page)
    assert shown.status_code == 200
    text = shown.content.decode()
    assert f"The par: score {PAR.score}, {PAR.moves} moves." in text
    assert f'"replay_url": "{api}"' in text


def test_a_day_without_a_solver_line_has_no_par_to_replay(daily):
    close_day(daily)
    api, page = par_paths(daily)

    response = Client().get(api)

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "no_par"
    assert Client().get(page).status_code == 404


def test_the_day_s_tv_shows_nothing_while_the_day_runs(par_day, make_player):
    stored_game(player=make_player("ann"), daily=par_day, score=500, moves=300, won=True)

    text = Client().get(f"/leaderboard/{par_day.date.isoformat()}/").content.decode()

    assert 'id="day-tv"' not in text
    assert "/par/" not in text


def test_the_day_s_tv_links_the_best_three_by_score_the_fewest_moves_and_the_par(
    daily, make_player
):
    # A day gone by, its boards under its own date (today's deal is the fixture's).
    yesterday = DailyDeal.objects.create(
        date=daily.date - datetime.timedelta(days=1),
        number=4,
        par=PAR.moves,
        par_log=" ".join(WIN_LOG),
    )
    games = {
        name: stored_game(
            player=make_player(name), daily=yesterday, score=score, moves=moves, won=won
        )
        for name, score, moves, won in [
            ("ann", 900, 400, True),
            ("ben", 800, 250, True),
            ("cid", 700, 500, False),
            ("dee", 600, 300, True),
        ]
    }

    text = Client().get(f"/leaderboard/{yesterday.date.isoformat()}/").content.decode()
    tv = text[text.index('id="day-tv"') : text.index("</section>", text.index('id="day-tv"'))]
    links = re.findall(r'data-tv="(\w+)"><a href="([^"]+)"', tv)

    assert links == [
        ("score", f"/replays/{games['ann'].pk}/"),
        ("score", f"/replays/{games['ben'].pk}/"),
        # A won game ranks before any game not won.
        ("score", f"/replays/{games['dee'].pk}/"),
        ("moves", f"/replays/{games['ben'].pk}/"),
        ("par", f"/leaderboard/{yesterday.date.isoformat()}/par/"),
    ]
    assert "Fewest moves: ben, 250 moves" in tv


def test_a_replay_shows_how_far_the_game_was_from_the_par_once_the_day_has_closed(alice, par_day):
    longer = ["S"] * 60 + WIN_LOG  # a stock cycle more: the same win, 60 moves longer
    game = submit_ranked(client_for(alice), longer).json()
    viewer = Client()
    viewer.force_login(alice)

    before = viewer.get(f"/replays/{game['id']}/").content.decode()
    close_day(par_day)
    after = Client().get(f"/replays/{game['id']}/").content.decode()

    assert 'id="fact-par"' not in before
    fact = after[after.index('id="fact-par"') : after.index("</dd>", after.index('id="fact-par"'))]
    assert f"+60 (par: {PAR.moves} moves)" in fact
    assert f"score {game['score'] - PAR.score:+d} (the par line's {PAR.score})" in fact
    assert f'href="/leaderboard/{par_day.date.isoformat()}/par/"' in fact
