"""A ranked game that replays a line played before it that day, by the player or from
the same browser or address under another account, is flagged `rehearsed` by the copy
check's job (the submission itself replays no other game)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import signing

from easyharp_site import devices
from games.models import Game, ReviewState
from games.review import flag_reasons
from tests.fixtures import WIN_LOG, client_for, copies_checked, submit, submit_ranked

pytestmark = pytest.mark.django_db

OTHER_DEAL = "EH1-N-AAAAAAB"


def on_device(client: Any, device: str) -> Any:
    """`client` as a browser that an account signed in on before (its known-device cookie)."""
    client.cookies[devices.COOKIE] = signing.dumps(
        {"device": device, "names": []}, salt="easyharp.known-device"
    )
    return client


def flags_of(body: dict[str, Any]) -> list[str]:
    # A whole log sent at once is also a `burst`: the flags of interest here are the others.
    return [flag for flag in Game.objects.get(pk=body["id"]).flags if flag != "burst"]


def test_a_ranked_game_replaying_the_players_own_practice_line_is_flagged(alice, daily):
    # Practice of the day's deal before the ranked game: a game begun offline, say.
    practice = submit(client_for(alice), WIN_LOG, REMOTE_ADDR="10.0.0.1").json()
    assert practice["ranked"] is False

    ranked = submit_ranked(client_for(alice), WIN_LOG, REMOTE_ADDR="10.0.0.9").json()
    copies_checked()

    game = Game.objects.get(pk=ranked["id"])
    assert ranked["ranked"] is True
    assert flags_of(ranked) == ["rehearsed"]
    assert game.review_state == ReviewState.FLAGGED
    assert (game.review["rehearsed_game"], game.review["rehearsed_source"]) == (
        practice["id"],
        "own",
    )
    (reason,) = flag_reasons(["rehearsed"], game.review)
    assert reason.startswith(f"replays game {practice['id']}, stored before it that day (own:")


def test_another_accounts_line_from_the_same_browser_is_flagged(alice, bob, daily):
    shown = submit_ranked(on_device(client_for(bob), "d" * 32), WIN_LOG, REMOTE_ADDR="10.0.0.1")

    ranked = submit_ranked(on_device(client_for(alice), "d" * 32), WIN_LOG, REMOTE_ADDR="10.0.0.2")
    copies_checked()

    game = Game.objects.get(pk=ranked.json()["id"])
    assert Game.objects.get(pk=shown.json()["id"]).device == "d" * 32
    # Another account's line: a copy too, which holds it off the boards.
    assert flags_of(ranked.json()) == ["rehearsed", "copied"]
    assert game.review_state == ReviewState.HELD
    assert (game.review["rehearsed_game"], game.review["rehearsed_source"]) == (
        shown.json()["id"],
        "device",
    )


def test_another_accounts_line_from_the_same_address_is_flagged(alice, bob, daily):
    shown = submit(client_for(bob), WIN_LOG, REMOTE_ADDR="2001:db8::1").json()

    # The same /64 block of IPv6 addresses counts as the same address.
    ranked = submit_ranked(client_for(alice), WIN_LOG, REMOTE_ADDR="2001:db8::2").json()
    copies_checked()

    game = Game.objects.get(pk=ranked["id"])
    assert game.address != "" and "2001" not in game.address
    assert flags_of(ranked) == ["rehearsed", "copied"]
    assert (game.review["rehearsed_game"], game.review["rehearsed_source"]) == (
        shown["id"],
        "address",
    )


def test_the_same_line_from_elsewhere_is_left_to_the_copy_check(alice, bob, daily):
    submit(on_device(client_for(bob), "b" * 32), WIN_LOG, REMOTE_ADDR="10.0.0.1")

    ranked = submit_ranked(on_device(client_for(alice), "a" * 32), WIN_LOG, REMOTE_ADDR="10.0.0.2")
    copies_checked()

    # Not a rehearsal: another browser and address; a copy, which the check flags as such.
    assert flags_of(ranked.json()) == ["copied"]


def test_a_different_line_or_another_deal_is_no_rehearsal(alice, daily):
    # Another deal, and a few opening actions of the day's: nothing like the win.
    submit(client_for(alice), WIN_LOG, deal=OTHER_DEAL)
    submit(client_for(alice), WIN_LOG[:5])

    ranked = submit_ranked(client_for(alice), WIN_LOG).json()
    copies_checked()

    assert flags_of(ranked) == []


def test_practice_after_the_ranked_game_changes_nothing(alice, daily):
    ranked = submit_ranked(client_for(alice), WIN_LOG).json()
    copies_checked()

    practice = submit(client_for(alice), WIN_LOG).json()
    copies_checked()

    assert practice["ranked"] is False
    assert flags_of(practice) == []
    assert flags_of(ranked) == []
