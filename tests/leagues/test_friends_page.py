"""The friends page (`/friends/`): a search form that works without JavaScript, follow
and unfollow buttons that post, and the players one follows."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import override_settings

from leagues import services
from leagues.models import Follow
from ranking.actions import player_ban


def signed_in(client, player):
    client.force_login(player)
    return client


def test_a_visitor_is_sent_to_log_in(client, db) -> None:
    response = client.get("/friends/?q=bob")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/friends/%3Fq%3Dbob"


def test_the_page_has_a_search_form_and_the_players_one_follows(client, alice, bob) -> None:
    services.follow_add(follower=alice, followee=bob)

    page = signed_in(client, alice).get("/friends/").content.decode()

    # A plain GET form: the results come back as a page.
    form = re.search(r'<form method="get" action="/friends/"[^>]*>(.*?)</form>', page, re.S)
    assert form is not None
    assert 'name="q"' in form.group(1)
    assert 'id="search-results"' not in page  # nothing searched yet
    following = re.search(r'<ul class="players" id="following">(.*?)</ul>', page, re.S)
    assert following is not None
    assert 'href="/players/bob/"' in following.group(1)
    assert 'action="/friends/unfollow/"' in following.group(1)
    # The navigation leads here.
    assert 'href="/friends/" id="friends-link"' in page


def test_a_search_lists_the_players_found_with_a_button_to_follow_each(
    client, alice, bob, make_player
) -> None:
    make_player("bobby")
    banned = make_player("bobban")
    player_ban(player=banned, moderator=None, reason="cheating")
    services.follow_add(follower=alice, followee=bob)

    response = signed_in(client, alice).get("/friends/", {"q": " BO "})

    assert response.status_code == 200
    page = response.content.decode()
    results = re.search(r'<ul class="players" id="search-results">(.*?)</ul>', page, re.S)
    assert results is not None
    items = re.findall(r'<li data-player="([^"]+)">(.*?)</li>', results.group(1), re.S)
    assert [name for name, _ in items] == ["bob", "bobby"]
    (_, bob_item), (_, bobby_item) = items
    # Each button is a form that posts, with the CSRF token, and keeps the search.
    assert 'action="/friends/unfollow/"' in bob_item and "Unfollow" in bob_item
    assert 'action="/friends/follow/"' in bobby_item and ">Follow<" in bobby_item
    assert 'name="csrfmiddlewaretoken"' in bobby_item
    assert '<input type="hidden" name="q" value="BO">' in bobby_item
    assert 'value="BO"' in page  # the field keeps what was searched


def test_follow_and_unfollow_post_and_come_back_to_the_search(client, alice, bob) -> None:
    client = signed_in(client, alice)

    followed = client.post("/friends/follow/", {"username": "bob", "q": "bo"})

    assert followed.status_code == 302
    assert followed["Location"] == "/friends/?q=bo"
    assert Follow.objects.filter(follower=alice, followee=bob).exists()
    page = client.get(followed["Location"]).content.decode()
    assert "You follow bob now." in page
    following = re.search(r'id="following">(.*?)</ul>', page, re.S)
    assert following is not None and 'href="/players/bob/"' in following.group(1)

    unfollowed = client.post("/friends/unfollow/", {"username": "bob"})

    assert unfollowed["Location"] == "/friends/"
    assert not Follow.objects.exists()
    assert "You no longer follow bob." in client.get("/friends/").content.decode()


def test_following_needs_a_post_with_its_csrf_token(alice, bob) -> None:
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.get("/friends/follow/").status_code == 405
    assert client.post("/friends/follow/", {"username": "bob"}).status_code == 403
    assert not Follow.objects.exists()


def test_following_oneself_or_nobody_says_why(client, alice) -> None:
    client = signed_in(client, alice)
    for name, words in (("alice", "You cannot follow yourself."), ("nobody", "There is no player")):
        response = client.post("/friends/follow/", {"username": name}, follow=True)
        assert words in response.content.decode()
    assert not Follow.objects.exists()
    assert client.post("/friends/befriend/", {"username": "bob"}).status_code == 404


@pytest.mark.parametrize(("q", "status"), [("", 400), ("bo b", 400), ("x" * 151, 400)])
def test_a_bad_search_is_refused_on_the_page_in_the_players_language(
    client, alice, q, status
) -> None:
    response = signed_in(client, alice).get("/friends/", {"q": q}, HTTP_ACCEPT_LANGUAGE="es")
    assert response.status_code == status
    page = response.content.decode()
    assert 'id="search-refusal"' in page and 'aria-invalid="true"' in page
    assert "Busca con el principio de un nombre" in page
    assert 'id="search-results"' not in page


def test_searches_on_the_page_share_the_apis_limit_per_client_address(client, alice, bob) -> None:
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {**rest["DEFAULT_THROTTLE_RATES"], "search": "2/min"}
    client = signed_in(client, alice)
    with override_settings(REST_FRAMEWORK=rest):
        assert client.get("/api/players/", {"q": "b"}).status_code == 200
        assert client.get("/friends/", {"q": "b"}).status_code == 200
        refused = client.get("/friends/", {"q": "b"})
        # The page without a search is not counted.
        plain = client.get("/friends/")
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    assert "Too many searches" in refused.content.decode()
    assert plain.status_code == 200


@pytest.mark.parametrize(
    ("language", "title"), [("en", "Friends"), ("es", "Amigos"), ("nl", "Vrienden")]
)
def test_the_page_is_written_in_each_language(client, alice, language, title) -> None:
    get_user_model().objects.create_user(username="bob")
    page = (
        signed_in(client, alice)
        .get("/friends/", {"q": "b"}, HTTP_ACCEPT_LANGUAGE=language)
        .content.decode()
    )
    assert f"<h1>{title}</h1>" in page
