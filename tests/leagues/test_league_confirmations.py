"""The league page asks first: deleting the league and removing a member open a page
that says what it does, whose button posts the action; and its invite link has a Copy
button beside the field it copies."""

from __future__ import annotations

import re

import pytest

from leagues import services
from leagues.models import League, Membership


@pytest.fixture
def league(alice, bob):
    league = services.league_create(owner=alice, name="Friday club")
    services.league_join(player=bob, code=league.invite_code)
    return league


def as_player(client, player):
    client.force_login(player)
    return client


def test_the_league_page_links_to_the_pages_that_ask_first(client, alice, league, daily) -> None:
    page = as_player(client, alice).get(f"/leagues/{league.slug}/").content.decode()

    assert f'href="/leagues/{league.slug}/delete/" id="delete-league"' in page
    assert f'href="/leagues/{league.slug}/remove/?username=bob"' in page
    # Neither is a button that posts at once.
    assert f'action="/leagues/{league.slug}/delete/"' not in page
    assert f'action="/leagues/{league.slug}/remove/"' not in page


def test_deleting_the_league_asks_first_and_happens_on_the_confirming_post(
    client, alice, league
) -> None:
    client = as_player(client, alice)

    asked = client.get(f"/leagues/{league.slug}/delete/")

    assert asked.status_code == 200
    page = asked.content.decode()
    assert "Delete the league “Friday club”?" in page
    assert "This cannot be undone" in page
    form = re.search(
        r'<form method="post" action="([^"]+)" id="confirm-action">(.*?)</form>', page, re.S
    )
    assert form is not None
    assert form.group(1) == f"/leagues/{league.slug}/delete/"
    assert 'name="csrfmiddlewaretoken"' in form.group(2)
    assert f'<a class="button" href="/leagues/{league.slug}/" id="cancel">' in form.group(2)
    assert League.objects.filter(pk=league.pk).exists()  # asking deletes nothing

    deleted = client.post(form.group(1))

    assert deleted.status_code == 302 and deleted["Location"] == "/leagues/"
    assert not League.objects.exists()


def test_removing_a_member_asks_first_and_happens_on_the_confirming_post(
    client, alice, bob, league
) -> None:
    client = as_player(client, alice)

    asked = client.get(f"/leagues/{league.slug}/remove/", {"username": "bob"})

    page = asked.content.decode()
    assert asked.status_code == 200
    assert "Remove bob from “Friday club”?" in page
    assert '<input type="hidden" name="username" value="bob">' in page
    assert Membership.objects.filter(league=league, player=bob).exists()

    removed = client.post(f"/leagues/{league.slug}/remove/", {"username": "bob"})

    assert removed["Location"] == f"/leagues/{league.slug}/"
    assert not Membership.objects.filter(league=league, player=bob).exists()


def test_only_the_owner_is_asked_and_only_about_a_member(
    client, alice, bob, make_player, league
) -> None:
    make_player("carol")  # not in the league
    owner = as_player(client, alice)
    for username in ("carol", "alice", ""):
        refused = owner.get(f"/leagues/{league.slug}/remove/", {"username": username}, follow=True)
        assert "No other member has that name." in refused.content.decode()
        assert refused.redirect_chain == [(f"/leagues/{league.slug}/", 302)]

    member = as_player(client, bob)
    refused = member.get(f"/leagues/{league.slug}/delete/", follow=True)
    assert "Only the league&#x27;s owner may do that." in refused.content.decode()
    assert League.objects.filter(pk=league.pk).exists()


def test_a_stranger_is_asked_nothing_and_the_other_actions_only_post(
    client, alice, make_player, league
) -> None:
    stranger = as_player(client, make_player("stranger"))
    assert stranger.get(f"/leagues/{league.slug}/delete/").status_code == 404
    owner = as_player(client, alice)
    for action in ("leave", "renew", "nonsense"):
        assert owner.get(f"/leagues/{league.slug}/{action}/").status_code == 405


@pytest.mark.parametrize(
    ("language", "question", "cannot"),
    [
        ("es", "¿Eliminar la liga «Friday club»?", "No se puede deshacer"),
        ("nl", "Competitie ‘Friday club’ verwijderen?", "Dit kan niet ongedaan"),
    ],
)
def test_the_question_is_asked_in_the_players_language(
    client, alice, league, language, question, cannot
) -> None:
    page = (
        as_player(client, alice)
        .get(f"/leagues/{league.slug}/delete/", HTTP_ACCEPT_LANGUAGE=language)
        .content.decode()
    )
    assert question in page and cannot in page


def test_the_invite_link_has_a_copy_button_for_the_script_and_a_field_without_it(
    client, alice, league, daily
) -> None:
    page = as_player(client, alice).get(f"/leagues/{league.slug}/").content.decode()

    # Without JavaScript: the read-only field, to select; the button waits for the script.
    assert re.search(
        r'<input class="invite-link" id="invite-link" readonly value="[^"]+/leagues/join/', page
    )
    assert (
        '<button type="button" id="copy-invite" data-copy="invite-link" hidden>Copy</button>'
        in page
    )
    assert 'role="status" id="copy-state" data-copy-state="invite-link"' in page
    assert '<script type="module" src="/static/games/copy.js"></script>' in page
