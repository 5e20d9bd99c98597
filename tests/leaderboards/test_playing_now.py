"""Who is playing now: the signed-in player's friends and league members whose ranked
game of today is running (an open attempt), on the home and friends pages and alone
for the pages' poll; names only, the watch link open once the viewer has played."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from games.services import attempt_start
from leaderboards.audiences import PLAYING_NOW_MAX, audience_playing
from leagues import services
from leagues.selectors import circle_sql
from tests.fixtures import WIN_LOG, play_ranked

pytestmark = pytest.mark.django_db


def started(player: Any) -> None:
    attempt_start(player=player, date=timezone.now().date())


def signed_in(player: Any) -> Client:
    client = Client()
    client.force_login(player)
    return client


def playing(viewer: Any) -> list[str]:
    return audience_playing(date=timezone.now().date(), audience=circle_sql(viewer.pk))


def test_friends_and_league_members_with_an_open_attempt_are_playing_now(
    daily, make_player, django_assert_num_queries
) -> None:
    alice, bob, carol, dave, erin, fay = (
        make_player(name) for name in ("alice", "bob", "carol", "dave", "erin", "fay")
    )
    services.follow_add(follower=alice, followee=bob)
    services.follow_add(follower=alice, followee=erin)
    league = services.league_create(owner=dave, name="Club")
    services.league_join(player=alice, code=league.invite_code)
    services.league_join(player=carol, code=league.invite_code)
    for player in (alice, bob, carol, fay):  # fay: nobody alice knows
        started(player)
    play_ranked(erin, WIN_LOG)  # erin has submitted: no longer playing
    # dave, in the league, has not started.

    with django_assert_num_queries(1):
        names = playing(alice)

    assert sorted(names) == ["bob", "carol"]


def test_a_banned_player_is_not_listed_and_the_list_is_capped(daily, make_player) -> None:
    alice = make_player("alice")
    friends = [make_player(f"friend{index:02}") for index in range(PLAYING_NOW_MAX + 3)]
    for friend in friends:
        services.follow_add(follower=alice, followee=friend)
        started(friend)
    friends[-1].is_active = False
    friends[-1].save()

    names = playing(alice)

    assert len(names) == PLAYING_NOW_MAX
    assert friends[-1].get_username() not in names


def section(html: str) -> str:
    start = html.index('id="playing-now"')
    return html[start : html.index("</section>", start)]


def test_the_watch_link_opens_once_the_viewer_has_played(daily, make_player) -> None:
    alice, bob = make_player("alice"), make_player("bob")
    services.follow_add(follower=alice, followee=bob)
    started(bob)

    before = section(signed_in(alice).get("/").content.decode())
    play_ranked(alice, WIN_LOG[:5])
    after = section(signed_in(alice).get("/").content.decode())

    assert 'data-player="bob"' in before
    assert "data-watch-locked" in before
    assert 'href="/live/bob/"' not in before
    assert 'href="/live/bob/"' in after
    assert "data-watch-locked" not in after


def test_the_friends_page_and_the_poll_show_it_too_and_a_visitor_sees_none(
    daily, make_player
) -> None:
    alice, bob = make_player("alice"), make_player("bob")
    services.follow_add(follower=alice, followee=bob)

    empty = signed_in(alice).get("/today/playing/")
    started(bob)
    friends_page = signed_in(alice).get("/friends/").content.decode()
    polled = signed_in(alice).get("/today/playing/")

    assert 'id="playing-now-none"' in empty.content.decode()
    assert 'data-player="bob"' in section(friends_page)
    assert 'data-player="bob"' in section(polled.content.decode())
    assert polled["Cache-Control"] == "private, no-store"
    assert 'id="playing-now"' not in Client().get("/").content.decode()
    assert Client().get("/today/playing/").content.decode().strip() == ""
