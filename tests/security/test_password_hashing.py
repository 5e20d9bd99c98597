"""Passwords are hashed with Argon2id at this service's parameters; a password
hashed before with PBKDF2 still logs in, and is rehashed with Argon2 then."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from rest_framework.test import APIClient

from tests.security.conftest import PASSWORD

pytestmark = pytest.mark.django_db

# What a hash made now starts with: Argon2id, 19 MiB, 2 passes, 1 lane.
ARGON2_PREFIX = "argon2$argon2id$v=19$m=19456,t=2,p=1$"


@pytest.fixture
def production_hashers(settings: Any) -> list[str]:
    """The configured hashers, without the fast one the test suite puts first."""
    settings.PASSWORD_HASHERS = [h for h in settings.PASSWORD_HASHERS if "MD5" not in h]
    return list(settings.PASSWORD_HASHERS)


def token_for(username: str, password: str) -> int:
    response = APIClient().post(
        "/api/auth/token/",
        json.dumps({"username": username, "password": password}),
        content_type="application/json",
    )
    return response.status_code


def test_argon2_comes_first_and_pbkdf2_stays_for_older_hashes(
    production_hashers: list[str],
) -> None:
    assert production_hashers[0] == "easyharp_site.accounts.hashers.ServiceArgon2PasswordHasher"
    assert "django.contrib.auth.hashers.PBKDF2PasswordHasher" in production_hashers[1:]


def test_a_sign_up_stores_an_argon2id_hash(production_hashers: list[str]) -> None:
    response = APIClient().post(
        "/api/auth/register/",
        json.dumps({"username": "carol", "password": PASSWORD}),
        content_type="application/json",
    )
    assert response.status_code == 201
    assert get_user_model().objects.get(username="carol").password.startswith(ARGON2_PREFIX)


def test_an_old_pbkdf2_hash_logs_in_and_is_upgraded_to_argon2(
    production_hashers: list[str],
) -> None:
    old = make_password(PASSWORD, hasher="pbkdf2_sha256")
    get_user_model().objects.create(username="veteran", password=old)
    assert token_for("veteran", "not-the-password") == 401
    assert get_user_model().objects.get(username="veteran").password == old  # untouched
    assert token_for("veteran", PASSWORD) == 200
    upgraded = get_user_model().objects.get(username="veteran").password
    assert upgraded.startswith(ARGON2_PREFIX)
    assert token_for("veteran", PASSWORD) == 200  # and the new hash logs in


def test_an_argon2_hash_with_other_parameters_is_rehashed_at_log_in(
    production_hashers: list[str],
) -> None:
    # e.g. one made with Django's defaults (100 MiB, 8 lanes) by an earlier release.
    from django.contrib.auth.hashers import Argon2PasswordHasher

    old = Argon2PasswordHasher().encode(PASSWORD, Argon2PasswordHasher().salt())
    assert not old.startswith(ARGON2_PREFIX)
    get_user_model().objects.create(username="veteran", password=old)
    assert token_for("veteran", PASSWORD) == 200
    assert get_user_model().objects.get(username="veteran").password.startswith(ARGON2_PREFIX)
