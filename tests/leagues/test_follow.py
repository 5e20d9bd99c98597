"""Following players, and the friends board: the player and whom they follow, ranked among them."""

from __future__ import annotations

import pytest

from leagues import services
from leagues.models import Follow
from tests.fixtures import client_for, stored_game


def follow_url(username: str) -> str:
    return f"/api/players/{username}/follow/"


def test_a_player_follows_and_unfollows_another(alice, bob) -> None:
    client = client_for(alice)

    followed = client.post(follow_url("bob"))
    again = client.post(follow_url("bob"))

    assert followed.status_code == again.status_code == 200
    assert followed.json() == {"player": "bob", "following": True}
    assert Follow.objects.filter(follower=alice, followee=bob).count() == 1
    assert client.get("/api/following/").json() == {"players": ["bob"]}

    unfollowed = client.delete(follow_url("bob"))

    assert unfollowed.json() == {"player": "bob", "following": False}
    assert not Follow.objects.exists()


def test_following_needs_a_signed_in_player_and_a_real_other_player(alice, anon) -> None:
    assert anon.post(follow_url("alice")).json()["error"]["code"] == "not_authenticated"
    refused = client_for(alice).post(follow_url("alice"))
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "cannot_follow_self"
    unknown = client_for(alice).post(follow_url("nobody"))
    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == "not_found"


def test_a_player_follows_at_most_the_limit(alice, make_player, monkeypatch) -> None:
    monkeypatch.setattr(services, "FOLLOWS_MAX", 2)
    for name in ("p1", "p2", "p3"):
        make_player(name)
    client = client_for(alice)
    assert client.post(follow_url("p1")).status_code == 200
    assert client.post(follow_url("p2")).status_code == 200

    refused = client.post(follow_url("p3"))

    assert refused.status_code == 409
    assert refused.json()["error"] == {
        "code": "too_many_follows",
        "message": "You follow 2 players already, the most one may follow.",
        "limit": 2,
    }
    # Following someone already followed is no new follow.
    assert client.post(follow_url("p2")).status_code == 200


def board(client, daily, **query: str):
    params = "&".join(f"{key}={value}" for key, value in query.items())
    return client.get(f"/api/daily/{daily.date.isoformat()}/leaderboard/?{params}")


def test_the_friends_board_ranks_the_player_and_whom_they_follow_among_them(
    alice, bob, make_player, daily
) -> None:
    carol, dave = make_player("carol"), make_player("dave")
    stored_game(player=dave, daily=daily, score=900, moves=100)  # best of all, not a friend
    stored_game(player=bob, daily=daily, score=500, moves=100)
    stored_game(player=alice, daily=daily, score=300, moves=100)
    stored_game(player=carol, daily=daily, score=300, moves=90)  # ties alice, fewer moves
    services.follow_add(follower=alice, followee=bob)
    services.follow_add(follower=alice, followee=carol)
    services.follow_add(follower=bob, followee=dave)  # not alice's

    page = board(client_for(alice), daily, order="score", scope="friends").json()

    assert [(e["rank"], e["player"]) for e in page["entries"]] == [
        (1, "bob"),
        (2, "carol"),
        (3, "alice"),
    ]
    assert page["total"] == 3
    assert page["me"]["rank"] == 3
    # The day's whole board is unchanged: dave first, alice fourth.
    everyone = board(client_for(alice), daily, order="score", around="me").json()
    assert everyone["me"]["rank"] == 4


def test_the_friends_board_pages_and_centres_on_the_player(alice, make_player, daily) -> None:
    for number in range(9):
        friend = make_player(f"f{number}")
        stored_game(player=friend, daily=daily, score=100 * (number + 1), moves=50)
        services.follow_add(follower=alice, followee=friend)
    stored_game(player=alice, daily=daily, score=450, moves=50)  # sixth of ten

    client = client_for(alice)
    second = board(client, daily, scope="friends", limit="3", offset="3").json()
    around = board(client, daily, scope="friends", limit="3", around="me").json()

    assert [e["rank"] for e in second["entries"]] == [4, 5, 6]
    assert [e["player"] for e in around["entries"]] == ["f4", "alice", "f3"]
    assert around["offset"] == 4


def test_the_friends_board_needs_a_signed_in_player(anon, daily) -> None:
    refused = board(anon, daily, scope="friends")
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "not_authenticated"


def test_a_player_without_a_game_sees_their_friends_and_no_entry_of_their_own(
    alice, bob, daily
) -> None:
    stored_game(player=bob, daily=daily, score=10, moves=5)
    services.follow_add(follower=alice, followee=bob)

    page = board(client_for(alice), daily, scope="friends").json()

    assert [e["player"] for e in page["entries"]] == ["bob"]
    assert "me" not in page
    refused = board(client_for(alice), daily, scope="friends", around="me")
    assert refused.status_code == 404
    assert refused.json()["error"]["code"] == "not_on_board"


@pytest.mark.parametrize("scope", ["everyone", "FRIENDS"])
def test_an_unknown_scope_is_refused(alice, daily, scope) -> None:
    refused = board(client_for(alice), daily, scope=scope)
    assert refused.status_code == 400
    assert "scope" in refused.json()["error"]["fields"]
