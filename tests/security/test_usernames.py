"""Usernames that could pass for another player's, or break a URL, are refused
at sign-up, through the API (400 `invalid_username`, 409 `username_taken`) and
the HTML form alike."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

import disarm
import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from easyharp_site.accounts.models import PlayerName
from easyharp_site.accounts.names import name_keys, name_problem
from tests.security.conftest import PASSWORD, assert_error_shape

pytestmark = pytest.mark.django_db


def register(username: str) -> Any:
    return APIClient().post(
        "/api/auth/register/",
        json.dumps({"username": username, "password": PASSWORD}),
        content_type="application/json",
    )


def refused(response: Any, status: int, code: str) -> str:
    assert response.status_code == status, response.content
    error = assert_error_shape(response.json())
    assert error["code"] == code
    return str(error["message"])


@pytest.mark.parametrize(
    "lookalike",
    [
        "\u0430\u04cf\u0456\u0441\u0435",  # all Cyrillic: а ӏ і с е
        "aIice",  # capital i for l
        "ALICE",
        "a1ice",  # digit one for l
        "ａｌｉｃｅ",  # full width, normalised to alice
    ],
)
def test_a_name_that_looks_like_a_taken_one_is_a_409(lookalike: str) -> None:
    assert register("alice").status_code == 201
    message = refused(register(lookalike), 409, "username_taken")
    assert "taken" in message
    assert get_user_model().objects.count() == 1


def test_the_message_names_the_player_it_looks_like() -> None:
    assert register("alice").status_code == 201
    message = refused(register("aIice"), 409, "username_taken")
    assert "'alice'" in message


@pytest.mark.parametrize(
    "name",
    [
        "\u0430lice",  # Cyrillic а, then Latin
        "pay\u0440al",  # Latin with a Cyrillic р
        "\u03a9mega",  # Greek and Latin
        "名前abc",
    ],
)
def test_a_name_mixing_scripts_is_a_400(name: str) -> None:
    message = refused(register(name), 400, "invalid_username")
    assert "scripts" in message
    assert not get_user_model().objects.exists()


@pytest.mark.parametrize("name", [".", "..", ".alice", "alice.", "...", "a.."])
def test_a_name_that_is_not_safe_in_a_url_path_is_a_400(name: str) -> None:
    message = refused(register(name), 400, "invalid_username")
    assert "dot" in message


FILLERS = ["\u3164", "\u3164\u3164alice", "\u115f", "\u1160", "\uffa0"]
INVISIBLE = [
    "\u2800",  # braille blank
    "ali\u200bce",  # zero-width space
    "ali\u200dce",  # zero-width joiner
    "alice\u2060",  # word joiner
    "\u00adalice",  # soft hyphen
    "alice\ufe0f",  # variation selector
    "ali ce",
]


@pytest.mark.parametrize("name", FILLERS)
def test_a_name_of_hangul_fillers_is_a_400_naming_the_filler(name: str) -> None:
    # The fillers are letters to Unicode (and to the API's \w), blank on screen.
    message = refused(register(name), 400, "invalid_username")
    assert "show nothing" in message
    assert re.search(r"U\+[0-9A-F]{4} HANGUL \w+ FILLER", message)
    assert not get_user_model().objects.exists()
    assert not PlayerName.objects.exists()


@pytest.mark.parametrize("name", INVISIBLE)
def test_a_name_with_another_character_that_shows_nothing_is_a_400(name: str) -> None:
    response = register(name)
    assert response.status_code == 400
    assert assert_error_shape(response.json())["code"] in ("invalid", "invalid_username")
    assert not get_user_model().objects.exists()


@pytest.mark.parametrize("name", FILLERS + INVISIBLE)
def test_the_name_rule_itself_refuses_every_character_that_shows_nothing(name: str) -> None:
    problem = name_problem(unicodedata.normalize("NFKC", name))
    assert problem is not None and "show nothing" in problem.message


def test_the_sign_up_page_says_why_in_the_readers_language() -> None:
    form = {"username": "\u3164", "password1": PASSWORD, "password2": PASSWORD, "email": ""}
    english = Client().post("/accounts/signup/", form).content.decode()
    spanish = Client(headers={"accept-language": "es"}).post("/accounts/signup/", form)

    assert "A username may not hold characters that show nothing" in english
    assert "U+1160 HANGUL JUNGSEONG FILLER" in spanish.content.decode()
    assert "A username may not hold" not in spanish.content.decode()
    assert not get_user_model().objects.exists()


def test_a_name_that_grows_past_150_characters_when_normalised_is_a_400() -> None:
    # U+FDFA is one character that NFKC writes as eighteen.
    refused(register("\ufdfa" * 10), 400, "invalid_username")


@pytest.mark.parametrize(
    "name", ["名前", "日本語テスト", "Ærøskøbing", "joão.silva@x", "δ-1+2", "a.b"]
)
def test_names_in_one_script_still_sign_up(name: str) -> None:
    response = register(name)
    assert response.status_code == 201, response.content
    assert APIClient().get(f"/api/players/{response.json()['username']}/").status_code == 200


def test_players_made_any_other_way_are_protected_too(make_player: Any) -> None:
    make_player("moderator")  # e.g. by createsuperuser or the admin
    refused(register("m0derator"), 409, "username_taken")  # zero for o


def test_a_renamed_player_keeps_only_the_keys_of_the_new_name(make_player: Any) -> None:
    player = make_player("alice")
    player.username = "bob"
    player.save()
    assert set(PlayerName.objects.filter(player=player).values_list("key", flat=True)) == {"bob"}
    assert register("alice").status_code == 201
    refused(register("BOB"), 409, "username_taken")


def test_a_log_in_does_not_touch_the_keys(make_player: Any) -> None:
    make_player("alice")
    before = list(PlayerName.objects.values_list("pk", "key"))
    assert Client().login(username="alice", password=PASSWORD)
    assert list(PlayerName.objects.values_list("pk", "key")) == before


@pytest.mark.parametrize(
    ("name", "message"),
    [("\u0430lice", "mix scripts"), ("..", "dot"), ("aIice", "looks like")],
)
def test_the_sign_up_form_refuses_with_the_same_clear_message(
    make_player: Any, name: str, message: str
) -> None:
    make_player("alice")
    response = Client().post(
        "/accounts/signup/", {"username": name, "password1": PASSWORD, "password2": PASSWORD}
    )
    assert response.status_code == 200
    assert message in response.content.decode()
    assert get_user_model().objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_existing_players_their_keys_in_sign_up_order() -> None:
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before, after = [("accounts", "0002_player_name")], [("accounts", "0003_existing_player_names")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old_user = executor.loader.project_state(before).apps.get_model("auth", "User")
    alice = old_user.objects.create(username="alice")
    lookalike = old_user.objects.create(username="ALICE")  # from before names were checked
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(after)
    keys = dict(PlayerName.objects.values_list("key", "player_id"))
    # alice holds "alice"; ALICE keeps its own other key only.
    assert keys == {"alice": alice.pk, "allce": lookalike.pk}
    refused(register("Alice"), 409, "username_taken")
    # Back to the latest schema (every app's newest migration), so the tests
    # after this one find every table and column.
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


# --- Look-alikes, generated from Unicode's names --------------------------------------

# Holds every Latin letter, every digit and each of `_`, `-` and `.`.
TAKEN = "the_quick-brown.fox_jumps_over_the_lazy_dog_0123456789"
# A Latin letter named after a base letter, however modified ("... TURNED A",
# "... SMALL CAPITAL H", "... L WITH INVERTED LAZY S").
LATIN_NAMED = re.compile(r"(?:LATIN|MODIFIER LETTER)[A-Z ]*? ([A-Z])(?: WITH .*)?")
SIGN_NAMED = {
    "_": ("LOW LINE", "MACRON"),
    "-": ("HYPHEN", "DASH", "MINUS"),
    ".": ("FULL STOP", "DOT"),
}
# Sharp s is a letter of its own, written "ss" when folded (Unicode's case folding).
OWN_LETTERS = {"\u00df", "\u1e9e"}


def imitated(char: str) -> str | None:
    """The character of `TAKEN` that `char` is made to look like, by its NFKC form's name.

    A character that NFKC writes as several (`⒈` is `1.`) makes a name of those,
    and a combining mark joins the letter before it (a Latin letter's look-alike).
    """
    nfkc = unicodedata.normalize("NFKC", char)
    if char.isascii() or len(nfkc) != 1 or char in OWN_LETTERS:
        return None
    if nfkc.isascii():
        return nfkc.lower() if nfkc.isalnum() or nfkc in "_-." else None
    name, category = unicodedata.name(nfkc, ""), unicodedata.category(nfkc)
    if not name or category.startswith("M"):
        return None
    if unicodedata.digit(nfkc, None) is not None:
        return str(unicodedata.digit(nfkc))
    latin = LATIN_NAMED.fullmatch(name)
    if category.startswith("L") and latin is not None:
        return latin[1].lower()
    if name.startswith(("GREEK", "CYRILLIC")):
        skeleton = disarm.skeleton_key(nfkc, digit_policy="tr39").lower()
        if len(skeleton) == 1 and skeleton in TAKEN:
            return skeleton
    if category.startswith("L") and category != "Lm":
        return None
    return next((sign for sign, words in SIGN_NAMED.items() if any(w in name for w in words)), None)


LOOKALIKES = [
    (char, target)
    for char, target in ((chr(point), imitated(chr(point))) for point in range(0x30000))
    if target is not None and not 0xD800 <= ord(char) < 0xE000
]


def test_the_generated_look_alikes_cover_every_class() -> None:
    targets = {target for _char, target in LOOKALIKES}
    assert targets >= set(TAKEN)
    assert len(LOOKALIKES) > 2000
    assert ("\u02cd", "_") in LOOKALIKES  # MODIFIER LETTER LOW MACRON


def test_every_generated_look_alike_is_refused_or_folded_onto_the_taken_name() -> None:
    taken = name_keys(TAKEN)
    passed = []
    for char, target in LOOKALIKES:
        name = get_user_model().normalize_username(TAKEN.replace(target, char, 1))
        if name_problem(name) is None and not name_keys(name) & taken:
            passed.append(f"U+{ord(char):04X} {unicodedata.name(char)} for {target!r}")
    assert not passed, f"{len(passed)} look-alikes pass: " + "; ".join(passed[:40])


@pytest.mark.parametrize(
    "lookalike",
    ["honest\u02cdhannah", "honest\u2010hannah", "hone\u1e63t_hannah", "\u029conest_hannah"],
)
def test_a_look_alike_of_a_taken_name_does_not_sign_up(lookalike: str) -> None:
    assert register("honest_hannah").status_code == 201
    response = register(lookalike)
    assert response.status_code in (400, 409), response.content
    assert response.json()["error"]["code"] in ("invalid", "invalid_username", "username_taken")
    assert get_user_model().objects.count() == 1
