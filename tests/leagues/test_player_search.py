"""Finding players by the beginning of their name (`GET /api/players/?q=`): prefix and
case, the limit, whom the viewer follows, who is never listed, refusals, the rate
limit per client address, and the index that serves it on PostgreSQL."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from leagues import selectors, services
from ranking.actions import player_ban, player_delete
from tests.fixtures import PASSWORD, client_for

SEARCH = "/api/players/"


def found(client, q: str, **extra: str) -> list[str]:
    response = client.get(SEARCH, {"q": q}, **extra)
    assert response.status_code == 200, response.content
    return [player["username"] for player in response.json()["players"]]


def test_it_finds_players_whose_name_starts_with_the_prefix_in_any_case(
    alice, make_player, anon
) -> None:
    for name in ("Bob", "bobby", "BOB2", "rebob", "carol"):
        make_player(name)
    client = client_for(alice)

    assert found(client, "bob") == ["Bob", "BOB2", "bobby"]
    assert found(client, "BOBB") == ["bobby"]
    assert found(client, "bO") == ["Bob", "BOB2", "bobby"]
    assert found(client, "ob") == []  # a prefix, not anywhere in the name
    # Visitors search too.
    assert found(anon, "car") == ["carol"]


def test_it_says_whom_the_viewer_follows(alice, bob, make_player, anon) -> None:
    make_player("bobby")
    services.follow_add(follower=alice, followee=bob)

    answer = client_for(alice).get(SEARCH, {"q": "bob"}).json()

    assert answer == {
        "players": [
            {"username": "bob", "following": True},
            {"username": "bobby", "following": False},
        ]
    }
    # Nobody is followed by a visitor.
    visitor = anon.get(SEARCH, {"q": "bob"}).json()["players"]
    assert [player["following"] for player in visitor] == [False, False]


def test_it_answers_at_most_twenty_players_in_name_order(alice, make_player) -> None:
    names = [f"player{number:02}" for number in range(25)]
    for name in reversed(names):
        make_player(name)

    assert found(client_for(alice), "PLAYER") == names[: selectors.SEARCH_LIMIT]
    assert selectors.SEARCH_LIMIT == 20


def test_it_never_lists_the_viewer_nor_a_banned_or_deleted_player(alice, make_player) -> None:
    for name in ("al", "alban", "aldel", "alfred"):
        make_player(name)
    banned = get_user_model().objects.get(username="alban")
    player_ban(player=banned, moderator=None, reason="cheating")
    player_delete(player=get_user_model().objects.get(username="aldel"), password=PASSWORD)

    assert found(client_for(alice), "al") == ["al", "alfred"]


@pytest.mark.parametrize(
    "q",
    [
        "",  # empty
        "b" * 151,  # longer than any name
        "bob smith",  # a blank
        "bo%",  # a wildcard is no name's character
        "b_%",
        "<script>",
        "~deleted-",  # a deleted account's tombstone
    ],
)
def test_a_query_no_name_could_start_with_is_refused(alice, q) -> None:
    refused = client_for(alice).get(SEARCH, {"q": q})

    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["code"] == "invalid_search"
    assert "beginning of a name" in error["message"]


def test_a_missing_query_is_refused(alice) -> None:
    refused = client_for(alice).get(SEARCH)
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "invalid_search"


def test_wildcards_of_like_are_letters_of_the_name(alice, make_player) -> None:
    # `_` is a name's character, not LIKE's "any character".
    make_player("a_b")
    make_player("axb")
    assert found(client_for(alice), "a_") == ["a_b"]


def test_a_name_written_in_another_normal_form_is_found(alice, make_player) -> None:
    make_player("ﬁona")  # stored in NFKC: "fiona"
    assert found(client_for(alice), "ＦＩ") == ["fiona"]  # fullwidth letters, NFKC "FI"


def rates(**scopes: str) -> dict:
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {**rest["DEFAULT_THROTTLE_RATES"], **scopes}
    return rest


def test_searches_are_rate_limited_per_client_address(alice, bob, anon) -> None:
    with override_settings(REST_FRAMEWORK=rates(search="2/min")):
        # Two players and a visitor behind one address share its allowance.
        first = client_for(alice).get(SEARCH, {"q": "b"}, REMOTE_ADDR="10.0.0.1")
        second = client_for(bob).get(SEARCH, {"q": "a"}, REMOTE_ADDR="10.0.0.1")
        third = anon.get(SEARCH, {"q": "a"}, REMOTE_ADDR="10.0.0.1")
        elsewhere = client_for(alice).get(SEARCH, {"q": "b"}, REMOTE_ADDR="10.0.0.2")

    assert [first.status_code, second.status_code, third.status_code] == [200, 200, 429]
    assert third.json()["error"]["code"] == "throttled"
    assert int(third["Retry-After"]) > 0
    assert elsewhere.status_code == 200


@pytest.mark.postgres
def test_the_search_is_a_range_of_the_name_prefix_index_on_postgresql(alice) -> None:
    # Many players whose name starts alike, with the table's statistics.
    get_user_model().objects.bulk_create(
        get_user_model()(username=f"Bo{number:04}", password="!") for number in range(2000)
    )
    with CaptureQueriesContext(connection) as queries:
        search = selectors.player_search(prefix="bo", viewer=alice)
    assert [player["username"] for player in search] == [f"Bo{n:04}" for n in range(20)]
    [query] = queries.captured_queries

    # The statement the search ran, planned with sequential scans ruled out: the
    # index must serve it (a small table might be scanned whole anyway).
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE auth_user")
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {query['sql']}")
        plan = "\n".join(row[0] for row in cursor.fetchall())

    assert "auth_user_name_prefix" in plan, plan
    # A prefix range of the upper-cased names, read in the index's order (no
    # sort of every match: at most an incremental one on ties, for the limit).
    assert "upper((username)::text) >= 'BO'::text" in plan, plan
    assert "upper((username)::text) < 'BP'::text" in plan, plan
    assert "Sort Key" not in plan or "Presorted Key" in plan, plan
