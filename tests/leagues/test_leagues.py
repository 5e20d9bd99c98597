"""Leagues: creating, joining by code or link, leaving, the owner's powers, the limits,
the league's boards, and privacy: a non-member sees nothing of a league."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import override_settings

from leagues import services
from leagues.models import Follow, League, Membership
from ranking.actions import player_delete
from tests.fixtures import PASSWORD, client_for, stored_game


def create(player, name: str = "Friday club") -> dict:
    response = client_for(player).post("/api/leagues/", {"name": name}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def join(player, code: str):
    return client_for(player).post("/api/leagues/join/", {"code": code}, format="json")


def test_a_player_creates_a_league_and_owns_it(alice) -> None:
    league = create(alice, "  Friday   club ")

    assert league["name"] == "Friday club"
    assert league["slug"].startswith("friday-club-")
    assert league["owner"] == "alice"
    assert league["members"] == 1
    assert league["is_owner"] is True
    listed = client_for(alice).get("/api/leagues/").json()
    assert [item["slug"] for item in listed] == [league["slug"]]


def test_an_invite_code_is_long_random_text(alice) -> None:
    codes = {create(alice, f"L{n}")["invite_code"] for n in range(3)}
    assert len(codes) == 3
    for code in codes:
        # 24 random bytes: 192 bits, well over the 128 bits nobody can guess.
        assert len(code) == 32 and services.INVITE_CODE_BYTES * 8 >= 128


@pytest.mark.parametrize("name", ["", "   ", "x" * 61, "\u3164", "\u3164 \u200b\u3164"])
def test_a_league_needs_a_name_of_at_most_60_characters(alice, name) -> None:
    refused = client_for(alice).post("/api/leagues/", {"name": name}, format="json")
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] in {"invalid", "invalid_name"}


def test_others_join_with_the_code_or_the_link_and_joining_again_is_harmless(
    alice, bob, make_player
) -> None:
    league = create(alice)
    carol = make_player("carol")

    by_code = join(bob, league["invite_code"])
    by_link = join(carol, f"https://example.org/leagues/join/{league['invite_code']}/")
    again = join(bob, league["invite_code"])

    assert by_code.status_code == by_link.status_code == again.status_code == 200
    assert by_code.json()["is_owner"] is False
    assert again.json()["members"] == 3
    detail = client_for(bob).get(f"/api/leagues/{league['slug']}/").json()
    assert detail["players"] == ["alice", "bob", "carol"]
    assert League.objects.get().members == Membership.objects.count() == 3


@pytest.mark.parametrize("code", ["nonsense!", "A" * 32, ""])
def test_a_wrong_code_joins_nothing(alice, bob, code) -> None:
    create(alice)
    refused = join(bob, code)
    assert refused.status_code in {400, 404}
    assert refused.json()["error"]["code"] in {"invalid", "invalid_code"}
    assert Membership.objects.filter(player=bob).count() == 0


def test_a_renewed_code_replaces_the_old_one(alice, bob, make_player) -> None:
    league = create(alice)
    renewed = client_for(alice).post(f"/api/leagues/{league['slug']}/invite/").json()

    assert renewed["invite_code"] != league["invite_code"]
    assert join(bob, league["invite_code"]).json()["error"]["code"] == "invalid_code"
    assert join(bob, renewed["invite_code"]).status_code == 200
    # Only the owner renews it.
    refused = client_for(bob).post(f"/api/leagues/{league['slug']}/invite/")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "not_owner"


def test_members_leave_but_the_owner_does_not(alice, bob) -> None:
    league = create(alice)
    join(bob, league["invite_code"])

    left = client_for(bob).post(f"/api/leagues/{league['slug']}/leave/")
    refused = client_for(alice).post(f"/api/leagues/{league['slug']}/leave/")

    assert left.status_code == 204
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "owner_cannot_leave"
    assert League.objects.get().members == 1
    # Once out, bob sees nothing of it.
    assert client_for(bob).get(f"/api/leagues/{league['slug']}/").status_code == 404


def test_the_owner_removes_members_and_deletes_the_league(alice, bob, make_player) -> None:
    league = create(alice)
    carol = make_player("carol")
    join(bob, league["invite_code"])
    join(carol, league["invite_code"])
    slug = league["slug"]

    not_owner = client_for(bob).delete(f"/api/leagues/{slug}/members/carol/")
    removed = client_for(alice).delete(f"/api/leagues/{slug}/members/carol/")
    not_member = client_for(alice).delete(f"/api/leagues/{slug}/members/carol/")
    not_self = client_for(alice).delete(f"/api/leagues/{slug}/members/alice/")

    assert not_owner.status_code == 403
    assert removed.status_code == 204
    assert not_member.status_code == not_self.status_code == 404
    assert not_member.json()["error"]["code"] == "not_a_member"
    assert client_for(alice).get(f"/api/leagues/{slug}/").json()["players"] == ["alice", "bob"]

    assert client_for(bob).delete(f"/api/leagues/{slug}/").status_code == 403
    assert client_for(alice).delete(f"/api/leagues/{slug}/").status_code == 204
    assert not League.objects.exists() and not Membership.objects.exists()


def test_a_league_holds_at_most_the_member_limit(alice, bob, make_player, monkeypatch) -> None:
    monkeypatch.setattr(services, "LEAGUE_MEMBERS_MAX", 2)
    league = create(alice)
    assert join(bob, league["invite_code"]).status_code == 200

    refused = join(make_player("carol"), league["invite_code"])

    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "league_full"
    assert refused.json()["error"]["limit"] == 2
    assert League.objects.get().members == 2


def test_a_player_is_in_at_most_the_league_limit(alice, bob, monkeypatch) -> None:
    monkeypatch.setattr(services, "LEAGUES_PER_PLAYER_MAX", 2)
    first = create(bob, "One")
    create(alice, "Mine")
    assert join(alice, first["invite_code"]).status_code == 200

    refused_join = join(alice, create(bob, "Two")["invite_code"])
    refused_create = client_for(alice).post("/api/leagues/", {"name": "Three"}, format="json")

    for refused in (refused_join, refused_create):
        assert refused.status_code == 409
        assert refused.json()["error"]["code"] == "too_many_leagues"


def rates(**scopes: str) -> dict:
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {**rest["DEFAULT_THROTTLE_RATES"], **scopes}
    return rest


def test_joining_is_rate_limited_per_player_and_per_client_address(alice, bob, make_player):
    league = create(alice)
    wrong = "B" * 32
    with override_settings(REST_FRAMEWORK=rates(join="2/hour")):
        # One player from two addresses: the player's own allowance runs out.
        client = client_for(bob)
        statuses = [
            client.post(
                "/api/leagues/join/", {"code": wrong}, format="json", REMOTE_ADDR=address
            ).status_code
            for address in ("10.0.0.1", "10.0.0.2", "10.0.0.3")
        ]
        assert statuses == [404, 404, 429]
        # Fresh accounts from one address: the address's allowance runs out.
        carol, dave = make_player("carol"), make_player("dave")
        first = client_for(carol).post(
            "/api/leagues/join/", {"code": wrong}, format="json", REMOTE_ADDR="10.0.0.9"
        )
        second = client_for(carol).post(
            "/api/leagues/join/",
            {"code": league["invite_code"]},
            format="json",
            REMOTE_ADDR="10.0.0.9",
        )
        third = client_for(dave).post(
            "/api/leagues/join/",
            {"code": league["invite_code"]},
            format="json",
            REMOTE_ADDR="10.0.0.9",
        )
    assert [first.status_code, second.status_code, third.status_code] == [404, 200, 429]
    assert third.json()["error"]["code"] == "throttled"
    assert int(third["Retry-After"]) > 0


# --- The league's boards and privacy -----------------------------------------------


def test_a_league_board_ranks_its_members_among_them(alice, bob, make_player, daily) -> None:
    league = create(alice)
    join(bob, league["invite_code"])
    outsider = make_player("outsider")
    stored_game(player=outsider, daily=daily, score=999, moves=10)
    stored_game(player=bob, daily=daily, score=500, moves=10, won=True)
    stored_game(player=alice, daily=daily, score=400, moves=10)

    url = f"/api/leagues/{league['slug']}/daily/{daily.date.isoformat()}/leaderboard/"
    page = client_for(alice).get(f"{url}?order=score").json()
    moves = client_for(alice).get(f"{url}?order=moves").json()

    assert [(e["rank"], e["player"]) for e in page["entries"]] == [(1, "bob"), (2, "alice")]
    assert page["total"] == 2
    assert page["me"]["rank"] == 2
    assert page["deal"] == "EH1-N-AAAAAAE"
    assert [e["player"] for e in moves["entries"]] == ["bob"]
    assert "me" not in moves


def test_a_non_member_sees_nothing_of_a_league(alice, bob, anon, daily) -> None:
    league = create(alice)
    slug = league["slug"]
    day = daily.date.isoformat()
    paths = [
        f"/api/leagues/{slug}/",
        f"/api/leagues/{slug}/daily/{day}/leaderboard/",
        f"/api/leagues/{slug}/standings/?period=week",
    ]
    for path in paths:
        for client, status in ((client_for(bob), 404), (anon, 401)):
            response = client.get(path)
            assert response.status_code == status, path
            assert "Friday" not in response.content.decode()
        # The same answer as for a league that does not exist.
        missing = client_for(bob).get(path.replace(slug, "no-such-league"))
        assert missing.json() == client_for(bob).get(path).json()
    for write in (
        client_for(bob).post(f"/api/leagues/{slug}/leave/"),
        client_for(bob).post(f"/api/leagues/{slug}/invite/"),
        client_for(bob).delete(f"/api/leagues/{slug}/"),
        client_for(bob).delete(f"/api/leagues/{slug}/members/alice/"),
    ):
        assert write.status_code == 404
        assert write.json()["error"]["code"] == "not_found"
    assert client_for(bob).get("/api/leagues/").json() == []


def test_a_non_member_gets_no_league_page(alice, bob, daily, client) -> None:
    league = create(alice)
    client.force_login(bob)
    assert client.get(f"/leagues/{league['slug']}/").status_code == 404
    for action in ("leave", "renew", "delete"):
        assert client.post(f"/leagues/{league['slug']}/{action}/").status_code == 404
    client.force_login(alice)
    page = client.get(f"/leagues/{league['slug']}/")
    assert page.status_code == 200
    assert league["invite_code"] in page.content.decode()


def test_the_invite_link_page_shows_the_league_and_joins_on_its_button(
    alice, bob, daily, client
) -> None:
    league = create(alice)
    link = f"/leagues/join/{league['invite_code']}/"
    client.force_login(bob)

    shown = client.get(link)
    assert shown.status_code == 200 and "Friday club" in shown.content.decode()
    assert not Membership.objects.filter(player=bob).exists()  # opening it joins nothing

    joined = client.post(link)
    assert joined.status_code == 302 and joined["Location"] == f"/leagues/{league['slug']}/"
    assert Membership.objects.filter(player=bob).exists()
    assert client.get("/leagues/join/" + "C" * 32 + "/").status_code == 404


def test_the_leagues_page_creates_and_joins(alice, bob, daily, client) -> None:
    client.force_login(alice)
    created = client.post("/leagues/", {"name": "Tuesday"})
    league = League.objects.get()
    assert created["Location"] == f"/leagues/{league.slug}/"
    client.force_login(bob)
    joined = client.post("/leagues/join/", {"code": league.invite_code})
    assert joined["Location"] == f"/leagues/{league.slug}/"
    listing = client.get("/leagues/").content.decode()
    assert "Tuesday" in listing


def test_a_deleted_player_leaves_every_league_and_follow_and_their_own_leagues_go(
    alice, bob, make_player
) -> None:
    carol = make_player("carol")
    theirs = create(alice, "Alice's")
    others = create(bob, "Bob's")
    join(alice, others["invite_code"])
    join(carol, theirs["invite_code"])
    services.follow_add(follower=alice, followee=bob)
    services.follow_add(follower=carol, followee=alice)

    player_delete(player=alice, password=PASSWORD)

    assert [league.name for league in League.objects.all()] == ["Bob's"]
    assert League.objects.get().members == 1
    assert not Membership.objects.filter(player=alice).exists()
    assert not Follow.objects.exists()
