"""Idempotency-Key: a retried submission returns the first game, never a second copy."""

from __future__ import annotations

import pytest

from games.models import Attempt, Game
from leaderboards.selectors import board_totals
from tests.fixtures import WIN_LOG, client_for, submit, submit_ranked

pytestmark = pytest.mark.django_db


def test_a_retry_with_the_same_key_returns_the_first_game(alice, daily):
    client = client_for(alice)

    first = submit_ranked(client, WIN_LOG, HTTP_IDEMPOTENCY_KEY="game-1")
    retry = submit(client, " ".join(WIN_LOG).lower(), HTTP_IDEMPOTENCY_KEY="game-1")

    assert (first.status_code, retry.status_code) == (201, 200)
    # The retry is the ranked game itself, not a practice game after it.
    assert retry.json() == first.json()
    assert retry.json()["ranked"] is True
    assert Game.objects.count() == 1
    assert Attempt.objects.get().game.pk == first.json()["id"]
    assert board_totals(date=daily.date)["score"] == 1


def test_the_same_key_with_another_log_is_refused(alice, daily):
    client = client_for(alice)
    first = submit(client, WIN_LOG, HTTP_IDEMPOTENCY_KEY="game-1")

    other = submit(client, WIN_LOG[:5], HTTP_IDEMPOTENCY_KEY="game-1")

    assert other.status_code == 409
    error = other.json()["error"]
    assert error["code"] == "idempotency_key_reused"
    assert error["game"] == first.json()["id"]
    assert Game.objects.count() == 1


def test_keys_belong_to_one_player(alice, bob, daily):
    first = submit(client_for(alice), WIN_LOG, HTTP_IDEMPOTENCY_KEY="same")
    second = submit(client_for(bob), WIN_LOG, HTTP_IDEMPOTENCY_KEY="same")

    assert (first.status_code, second.status_code) == (201, 201)
    assert first.json()["id"] != second.json()["id"]


def test_without_a_key_each_submission_is_a_new_game(alice, daily):
    client = client_for(alice)

    submit(client, WIN_LOG)
    submit(client, WIN_LOG)

    assert Game.objects.count() == 2


def test_an_overlong_key_is_refused(alice, daily):
    response = submit(client_for(alice), WIN_LOG, HTTP_IDEMPOTENCY_KEY="k" * 256)

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_idempotency_key"
    assert not Game.objects.exists()


def test_a_refused_log_does_not_use_up_the_key(alice, daily):
    client = client_for(alice)
    refused = submit(client, ["U"], HTTP_IDEMPOTENCY_KEY="k")

    accepted = submit(client, WIN_LOG, HTTP_IDEMPOTENCY_KEY="k")

    assert (refused.status_code, accepted.status_code) == (400, 201)
