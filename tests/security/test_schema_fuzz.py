"""Fuzz the whole HTTP API from its own OpenAPI schema with schemathesis, every check on.

Schemathesis reads `/api/schema/` and generates requests for every operation,
valid and invalid (wrong types, missing fields, odd unicode, huge numbers,
boundary values), calling the Django app in-process. Every answer must pass all
of schemathesis' checks: no 5xx; a status code, body, headers and content type
the schema documents for the operation; invalid input refused and valid input
accepted; undeclared methods answered 405 with `Allow`; authentication enforced
where the schema requires it; and, along the sequences schemathesis infers from
the schema (a submitted game's id to its page and replay), a game just stored
can be read. On top of them, every refusal must be in the error shape
`{"error": {"code", "message", ...}}`.

Hypothesis runs derandomized, so a run is the same on every machine. It runs
on PostgreSQL and Redis, as in production (CI fails without them): some
refusals, such as text a column cannot hold, happen only there.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
import schemathesis
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.specs.openapi.checks import positive_data_acceptance

from games.models import Game
from ranking.actions import game_submit
from tests.security.conftest import WON_DEAL, WON_LOG, assert_error_shape

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

# All checks are on (schemathesis' default). Where a check's default
# expectation does not fit this API, it is changed here for the operations it
# concerns only, with the reason. `ignored_auth` needs no exception: the public
# operations list `{}` (no credentials) among their security requirements.
CONFIG = """
[generation]
mode = "all"

[phases]
# The coverage phase adds boundary values (limits, huge numbers, empty and
# missing fields) on top of the schema's examples and the random fuzzing.
examples.enabled = true
coverage.enabled = true
fuzzing.enabled = true
"""

# Where schema-valid data is still refused for a rule no JSON Schema can state.
OPERATIONS = """
# Whether a league slug names a league the player is in, an invite code a
# league, or a username a player, no JSON Schema can state: a documented 404
# (`not_found`, `invalid_code`), the same for a league that exists but is not
# the player's.
[[operations]]
include-path-regex = "^/api/(leagues/[^/]+/|players/[^/]+/follow/)"
checks.positive_data_acceptance.expected-statuses = [
    "2xx", "400", "401", "403", "404", "409", "429"
]

# Whether a race code names a race, and whether the player is its host or one
# of its players, no JSON Schema can state: a documented 404 (`not_found`),
# 403 (`not_host`, `not_in_race`) or 409 (`race_full`, `race_started`,
# `race_over`).
[[operations]]
include-path-regex = "^/api/races/[^/]+/"
checks.positive_data_acceptance.expected-statuses = [
    "2xx", "400", "401", "403", "404", "409", "429"
]

# A ranked attempt is today's only: a schema-valid past date is a documented 409
# `day_closed`, a day not prepared a 404, and a saved log must be legal in the
# day's deal (a documented 400 `illegal_action`), which no JSON Schema can state.
[[operations]]
include-path = "/api/daily/{date}/attempt/"
checks.positive_data_acceptance.expected-statuses = [
    "2xx", "400", "401", "403", "404", "409", "429"
]

# Standings are of today or before: a day to come, which the clock decides and
# no JSON Schema can state, is a documented 400 `invalid` (the league's
# standings are covered by the league rule above).
[[operations]]
include-path = "/api/standings/"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "429"]

# A player's badges are of a month the service has served, which the clock
# decides (a documented 400 `month_not_served`; year 0000 is no year, a 400
# `invalid`), for a username that names a player (a documented 404).
[[operations]]
include-path = "/api/players/{username}/badges/"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "429"]

# A game's log must be legal in its deal, and a deal code's seven letters must
# stand for a deal 1..999,999: rules of the game that no JSON Schema can state.
# Schema-valid data refused for them is a documented 400 (`illegal_action`,
# `invalid_deal`, `empty_log`, `log_too_long`).
[[operations]]
include-path-regex = "^/api/(games|hint)/$"
include-method = "POST"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "409", "429"]

# A new password must also pass the site's password rules (not common, not all
# digits, not like the username), which no JSON Schema can state: a documented
# 400 `invalid_password`.
[[operations]]
include-path = "/api/auth/register/"
include-method = "POST"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "409", "429"]

# A search starts a name: Unicode letters and digits (Python's word characters) and
# `_ . @ + -`, which JSON Schema's regular expressions cannot state; any other
# character is a documented 400 `invalid_search`.
[[operations]]
include-path-regex = "^/api/players/$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "429"]
"""

# Valid requests only, signed in (with the token of `alice_token`): aimed at
# what is stored, and the stateful sequences.
ALICE_TOKEN = "a11ce" * 8
POSITIVE_CONFIG = f"""
[generation]
mode = "positive"

[auth.openapi.tokenAuth]
api_key = "Token {ALICE_TOKEN}"
"""

FUZZ = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)

# Replays are gzip-compressed when the client accepts it; schemathesis' WSGI
# transport hands the body over as sent, without decoding it as an HTTP client
# would, so these requests ask for the plain body (gzip has its own tests in
# tests/games/test_replay_steps.py).
PLAIN = {"Accept-Encoding": "identity"}

# pytest-django has set Django up before collection; reading the schema needs no database.
schema = schemathesis.openapi.from_wsgi(
    "/api/schema/", WSGIHandler(), config=schemathesis.Config.from_str(CONFIG + OPERATIONS)
)
positive_schema = schemathesis.openapi.from_wsgi(
    "/api/schema/", WSGIHandler(), config=schemathesis.Config.from_str(POSITIVE_CONFIG)
)
# The operations that read a stored day or player, and the log-in past its CSRF
# check. A stored game and its replay are read in the workflows below.
stored_schema = positive_schema.include(path_regex=r"\{(date|username)\}|/auth/login/")
# A CSRF cookie and the same token in the header let a log-in reach the view.
CSRF_TOKEN = "f" * 32


@pytest.fixture(autouse=True)
def _in_process_app(settings: Any) -> Iterator[None]:
    """Call the app like Django's test client does: keep the test's database
    connection open between requests, and lift the rate limits so the fuzzer
    reaches the views (the limits have their own tests). A hint's solver budget
    is cut short: the fuzzer checks the answer, not the solver."""
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = dict.fromkeys(rest["DEFAULT_THROTTLE_RATES"], "100000/min")
    settings.REST_FRAMEWORK = rest
    settings.HINT_SOLVER_SECONDS = 0.05
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def alice_token(player: AbstractBaseUser) -> str:
    return Token.objects.create(user=player, key=ALICE_TOKEN).key


@pytest.fixture
def stored_game(daily: Any, player: AbstractBaseUser) -> Game:
    """A won game of today's deal by `alice`: on both of today's boards."""
    game, _ = game_submit(player=player, deal=WON_DEAL, log=WON_LOG)
    return game


def check_response(response: Any) -> None:
    if response.status_code >= 400:
        # Every refusal, whatever the input, is in the documented shape.
        assert_error_shape(response.json())


@pytest.mark.django_db(transaction=False)
@schema.parametrize()
@FUZZ
def test_anonymous_requests_pass_every_check(case: Any, daily: Any) -> None:
    check_response(case.call_and_validate(headers=PLAIN))


@pytest.mark.django_db(transaction=False)
@schema.parametrize()
@FUZZ
def test_signed_in_requests_pass_every_check(case: Any, daily: Any, token: str) -> None:
    check_response(case.call_and_validate(headers={**PLAIN, "Authorization": f"Token {token}"}))


@pytest.mark.django_db(transaction=False)
@stored_schema.parametrize()
@FUZZ
def test_requests_for_stored_data_pass_every_check(
    case: Any, daily: Any, stored_game: Game, alice_token: str
) -> None:
    # Generated dates and names almost never name what is stored, so the
    # other tests see these operations answer 404 and never their 200s.
    stored = {"date": daily.date.isoformat(), "username": stored_game.player.get_username()}
    case.path_parameters = {
        name: stored.get(name, value) for name, value in (case.path_parameters or {}).items()
    }
    case.cookies = {**(case.cookies or {}), "csrftoken": CSRF_TOKEN}
    # A month is asked of a player's badges; one the service has not served
    # (the clock decides) is a documented 400, as in the operations above.
    excluded = [positive_data_acceptance] if case.path.endswith("/badges/") else []
    response = case.call_and_validate(
        headers={**PLAIN, "X-CSRFToken": CSRF_TOKEN}, excluded_checks=excluded
    )
    check_response(response)
    if excluded and response.status_code == 400:
        assert response.json()["error"]["code"] in {"month_not_served", "invalid"}


@pytest.mark.django_db(transaction=False)
def test_signed_in_workflows_pass_every_check(daily: Any, alice_token: str) -> None:
    """Sequences along the links schemathesis infers from the schema (a
    submitted game to its page and replay; a player to their games), where the
    checks that look back at earlier steps run too."""

    class SignedIn(positive_schema.as_state_machine()):
        def setup(self) -> None:
            # Each sequence starts from the same stored data: what one stores
            # (a game, an idempotency key) would change what the next is answered.
            self.sequence = ExitStack()
            self.sequence.enter_context(transaction.atomic())

        def teardown(self) -> None:
            transaction.set_rollback(True)
            self.sequence.close()

        def before_call(self, case: Any) -> None:
            case.headers = {**(case.headers or {}), **PLAIN}
            if case.operation.label == "POST /api/games/":
                # A generated log is almost never legal, and a refused one
                # stores nothing for the next steps to read. The start of a
                # won game: a short replay keeps each sequence quick.
                case.body = {"deal": WON_DEAL, "log": " ".join(WON_LOG[:20])}
            elif case.operation.label == "GET /api/players/":
                # A generated search holds a character no name has (a documented
                # 400, fuzzed above) more often than not: one that finds players.
                case.query = {"q": "a"}

        def after_call(self, response: Any, case: Any) -> None:
            check_response(response)

    SignedIn.run(
        settings=settings(
            max_examples=20,
            stateful_step_count=5,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
        )
    )
