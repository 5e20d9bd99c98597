"""Joins and follows at the same moment, on PostgreSQL with real concurrent transactions:
the limits hold however many arrive together."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from easyharp_site.errors import ServiceError
from leagues import services
from leagues.models import Follow, League, Membership
from tests.fixtures import at_once

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

real_room = services._membership_room


def slow_room(player: Any) -> None:
    # Between counting and inserting: two joins that both counted before either
    # inserted would both pass the limit.
    real_room(player)
    time.sleep(0.2)


def players(prefix: str, count: int) -> list[Any]:
    return get_user_model().objects.bulk_create(
        get_user_model()(username=f"{prefix}{n}") for n in range(count)
    )


def refusals(results: list[Any]) -> list[str]:
    return sorted(r.code if isinstance(r, ServiceError) else "ok" for r in results)


def test_two_joins_at_once_into_the_last_place_of_a_league_let_one_in(
    alice, bob, make_player, monkeypatch
) -> None:
    league = services.league_create(owner=alice, name="Full house")
    Membership.objects.bulk_create(
        Membership(league=league, player=player)
        for player in players("m", services.LEAGUE_MEMBERS_MAX - 2)
    )
    League.objects.filter(pk=league.pk).update(members=services.LEAGUE_MEMBERS_MAX - 1)
    carol = make_player("carol")
    monkeypatch.setattr(services, "_membership_room", slow_room)

    results = at_once(
        lambda: services.league_join(player=bob, code=league.invite_code),
        lambda: services.league_join(player=carol, code=league.invite_code),
    )

    assert refusals(results) == ["league_full", "ok"]
    assert League.objects.get().members == services.LEAGUE_MEMBERS_MAX
    assert Membership.objects.filter(league=league).count() == services.LEAGUE_MEMBERS_MAX


def test_one_player_joining_two_leagues_at_once_at_their_limit_joins_one(
    alice, bob, monkeypatch
) -> None:
    leagues = [
        League(slug=f"l{n}", name=f"L{n}", owner=alice, invite_code=f"code{n:030}", members=1)
        for n in range(services.LEAGUES_PER_PLAYER_MAX + 1)
    ]
    League.objects.bulk_create(leagues)
    Membership.objects.bulk_create(
        Membership(league=league, player=bob)
        for league in leagues[: services.LEAGUES_PER_PLAYER_MAX - 1]
    )
    monkeypatch.setattr(services, "_membership_room", slow_room)
    last, extra = leagues[-2], leagues[-1]

    results = at_once(
        lambda: services.league_join(player=bob, code=last.invite_code),
        lambda: services.league_join(player=bob, code=extra.invite_code),
    )

    assert refusals(results) == ["ok", "too_many_leagues"]
    assert Membership.objects.filter(player=bob).count() == services.LEAGUES_PER_PLAYER_MAX


def test_two_follows_at_once_at_the_limit_add_one(alice, make_player, monkeypatch) -> None:
    followed = players("f", services.FOLLOWS_MAX - 1)
    Follow.objects.bulk_create(Follow(follower=alice, followee=player) for player in followed)
    first, second = make_player("first"), make_player("second")
    real_create = Follow.objects.create

    def slow_create(**kwargs: Any) -> Follow:
        # Between counting and inserting, as above.
        time.sleep(0.2)
        return real_create(**kwargs)

    monkeypatch.setattr(Follow.objects, "create", slow_create)

    results = at_once(
        lambda: services.follow_add(follower=alice, followee=first),
        lambda: services.follow_add(follower=alice, followee=second),
    )

    assert refusals(results) == ["ok", "too_many_follows"]
    assert Follow.objects.filter(follower=alice).count() == services.FOLLOWS_MAX
