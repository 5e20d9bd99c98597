"""The friends board below its ranked rows: the friends whose game is assisted (shown as
assisted, without a rank) and those who have not played yet, on the page and in the API."""

from __future__ import annotations

import re

from rest_framework.test import APIRequestFactory, force_authenticate

from leaderboards.api_urls import board_api_urls
from leagues import services
from ranking.actions import game_void, player_ban
from tests.fixtures import WIN_LOG, client_for, close_day, play_assisted, play_ranked


def friends_of(player, *friends) -> None:
    for friend in friends:
        services.follow_add(follower=player, followee=friend)


def board(player, daily, order: str = "score"):
    response = client_for(player).get(
        f"/api/daily/{daily.date.isoformat()}/leaderboard/?order={order}&scope=friends"
    )
    assert response.status_code == 200, response.content
    return response.json()


def test_the_api_lists_assisted_friends_and_friends_who_have_not_played(
    alice, bob, make_player, daily
) -> None:
    carol, dave, erin = make_player("carol"), make_player("Dave"), make_player("erin")
    stranger = make_player("stranger")
    friends_of(alice, bob, carol, dave, erin)
    play_ranked(bob, WIN_LOG)
    play_assisted(carol, ["S", "S"])
    play_assisted(stranger, ["S"])  # not a friend

    page = board(alice, daily)

    assert [entry["player"] for entry in page["entries"]] == ["bob"]
    [assisted] = page["assisted"]
    assert assisted.pop("duration_ms") >= 0
    assert assisted == {"player": "carol", "score": 0, "moves": 2, "won": False}
    # Alice herself is not listed: the lists are of her friends. Names in any case, in order.
    assert page["not_played"] == ["Dave", "erin"]
    # The moves board lists them alike (a friend who played and lost is on neither list).
    moves = board(alice, daily, "moves")
    assert moves["not_played"] == ["Dave", "erin"]
    assert [entry["player"] for entry in moves["assisted"]] == ["carol"]


def test_banned_friends_and_voided_games_are_in_neither_list(alice, bob, make_player, daily):
    carol, dave = make_player("carol"), make_player("dave")
    friends_of(alice, bob, carol, dave)
    assisted = play_assisted(carol, ["S"])
    player_ban(player=bob, moderator=None, reason="cheating")
    game_void(game=assisted, moderator=None, reason="copied")

    page = board(alice, daily)

    assert page["assisted"] == []
    assert page["not_played"] == ["dave"]


def test_only_the_friends_scope_carries_the_lists(alice, bob, daily) -> None:
    friends_of(alice, bob)
    everyone = client_for(alice).get(f"/api/daily/{daily.date.isoformat()}/leaderboard/").json()
    assert "not_played" not in everyone and "assisted" not in everyone


def friends_page(client, player, daily, language: str = "en", day: str = "") -> str:
    client.force_login(player)
    path = f"/leaderboard/{day}/" if day else "/leaderboard/"
    response = client.get(f"{path}?scope=friends", HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200
    return response.content.decode()


def test_the_page_shows_assisted_friends_as_assisted_below_the_ranked_rows(
    client, alice, bob, make_player, daily
) -> None:
    carol = make_player("carol")
    friends_of(alice, bob, carol)
    play_ranked(bob, WIN_LOG)
    play_assisted(carol, ["S", "S"])

    page = friends_page(client, alice, daily)

    ranked, off = re.findall(r"<tbody[^>]*>(.*?)</tbody>", page, re.S)
    assert 'data-follow="bob"' in ranked and "carol" not in ranked
    assisted = re.search(r'<tr class="assisted" data-player="carol">(.*?)</tr>', off, re.S)
    assert assisted is not None
    row = assisted.group(1)
    assert '<td class="num rank" data-label="Rank">–</td>' in row
    assert "assisted: on no board" in row
    assert '<td class="num" data-label="Moves">2</td>' in row


def test_the_page_lists_friends_who_have_not_played_yet(
    client, alice, bob, make_player, daily
) -> None:
    carol = make_player("carol")
    friends_of(alice, bob, carol)
    play_ranked(bob, WIN_LOG)

    page = friends_page(client, alice, daily)

    not_played = re.search(r'<p id="friends-not-played" class="names">(.*?)</p>', page, re.S)
    assert not_played is not None
    text = re.sub(r"<[^>]+>", "", not_played.group(1))
    assert " ".join(text.split()) == "Not played yet: carol"
    assert 'data-player="carol"><a href="/players/carol/">carol</a>' in not_played.group(1)
    # And where to find more friends.
    assert 'href="/friends/" id="find-friends"' in page


def test_a_past_day_says_who_did_not_play_in_each_language(
    client, alice, bob, make_player, daily
) -> None:
    friends_of(alice, bob)
    close_day(daily)
    day = daily.date.isoformat()
    for language, words in (
        ("en", "Did not play:"),
        ("es", "No jugaron:"),
        ("nl", "Niet gespeeld:"),
    ):
        page = friends_page(client, alice, daily, language, day)
        assert words in page, language
        assert "Not played yet" not in page


def test_the_everyone_board_has_no_such_lists(client, alice, bob, daily) -> None:
    friends_of(alice, bob)
    client.force_login(alice)
    page = client.get("/leaderboard/").content.decode()
    assert "friends-not-played" not in page and "friends-assisted" not in page


def test_the_boards_api_without_the_leagues_wiring_refuses_the_friends_scope(alice, daily):
    """Who a player's friends are is the leagues' to say: the board API built without
    that read refuses `scope=friends` with a clear error, and still serves the day's."""
    [view] = [route for route in board_api_urls() if route.name == "api-leaderboard"]
    request = APIRequestFactory().get("/", {"scope": "friends"})
    force_authenticate(request, user=alice)
    response = view.callback(request, date=daily.date.isoformat())
    assert response.status_code == 400
    assert response.data["error"]["code"] == "bad_scope"
    everyone = APIRequestFactory().get("/")
    assert view.callback(everyone, date=daily.date.isoformat()).status_code == 200
