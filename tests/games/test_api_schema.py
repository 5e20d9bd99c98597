"""The OpenAPI document: valid, without generator warnings, and saying what the server does.

schemathesis checks the running API against it (tests/security/test_schema_fuzz.py);
these tests pin the facts it states that the fuzzer may not reach.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from games.api import DEAL_CODE_PATTERN
from games.rules import DEAL_MAX, Deal

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    response = Client().get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    return response.json()


def test_spectacular_validates_the_document_and_warns_of_nothing(tmp_path: Path) -> None:
    # Its own process: drf-spectacular reports each warning once per process.
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "spectacular",
            "--validate",
            "--fail-on-warn",
            "--file",
            str(tmp_path / "schema.yaml"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert result.returncode == 0, result.stderr
    assert "Warning" not in result.stderr, result.stderr


def test_every_refusal_is_documented_in_the_error_shape(document: dict[str, Any]) -> None:
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            refusals = {s: r for s, r in operation["responses"].items() if s >= "400"}
            # Any request may be refused for a NUL byte, a bad token, an Accept
            # header the API cannot meet, or the database being away.
            assert {"400", "401", "406", "503"} <= set(refusals), (method, path)
            for response in refusals.values():
                body = response["content"]["application/json"]["schema"]
                assert body == {"$ref": "#/components/schemas/Error"}, (method, path)
                assert response["description"]


def test_throttled_and_unavailable_answers_document_retry_after(document: dict[str, Any]) -> None:
    for operations in document["paths"].values():
        for operation in operations.values():
            for status in ("429", "503"):
                if status in operation["responses"]:
                    assert "Retry-After" in operation["responses"][status]["headers"]


def test_the_error_component_has_a_code_and_a_message(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]

    assert schemas["Error"]["required"] == ["error"]
    assert set(schemas["ErrorDetail"]["required"]) == {"code", "message"}


def test_a_hint_needs_no_log(document: dict[str, Any]) -> None:
    assert document["components"]["schemas"]["HintRequest"]["required"] == ["deal"]


def test_leaderboard_paging_states_the_bounds_the_server_checks(document: dict[str, Any]) -> None:
    parameters = document["paths"]["/api/daily/{date}/leaderboard/"]["get"]["parameters"]
    schemas = {p["name"]: p["schema"] for p in parameters}

    assert schemas["limit"] == {"type": "integer", "minimum": 1, "maximum": 100, "default": 50}
    assert schemas["offset"]["minimum"] == 0
    assert schemas["date"]["pattern"] == "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"


@pytest.mark.parametrize("number", [1, 2, 26, 12_345, DEAL_MAX])
def test_every_canonical_deal_code_matches_the_documented_pattern(number: int) -> None:
    assert re.fullmatch(DEAL_CODE_PATTERN, Deal(number).code)


@given(st.from_regex(DEAL_CODE_PATTERN, fullmatch=True))
def test_the_engine_reads_every_code_the_pattern_admits(text: str) -> None:
    # Case and blanks are the engine's to ignore; only the number may be out of range.
    try:
        deal = Deal.from_code(text)
    except ValueError as error:
        assert "deals are numbered 1 to" in str(error)
    else:
        assert deal.code == text.strip().upper()
