"""Production settings: `manage.py check --deploy` is clean and the secure defaults hold.

Settings are read once per process, so each case runs Django in a subprocess
with a production-like environment.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PRODUCTION_ENV = {
    "DEBUG": "false",
    "SECRET_KEY": "k3y-" + "x9Qz!v" * 12,
    "DAILY_DEAL_SALT": "a-production-salt",
    "ALLOWED_HOSTS": "harp.example.com",
}


def run_django(args: list[str], extra_env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SECURE_", "DJANGO_")) and key not in {"DEBUG", "SECRET_KEY"}
    }
    env.update(extra_env)
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def read_settings(extra_env: dict[str, str], names: list[str]) -> dict[str, object]:
    code = (
        "import json, django; django.setup(); from django.conf import settings; "
        f"print(json.dumps({{n: getattr(settings, n, None) for n in {names!r}}}))"
    )
    result = run_django(
        ["-c", code], {**extra_env, "DJANGO_SETTINGS_MODULE": "easyharp_site.settings"}
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_check_deploy_reports_no_security_issue_with_production_settings() -> None:
    # Only the deployment (security) checks: schema or model warnings have their own tests.
    result = run_django(
        ["manage.py", "check", "--deploy", "--tag", "security", "--fail-level", "WARNING"],
        PRODUCTION_ENV,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_reports_no_error_with_production_settings() -> None:
    result = run_django(["manage.py", "check", "--deploy"], PRODUCTION_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "security." not in result.stdout + result.stderr


def test_check_deploy_flags_a_production_run_without_https() -> None:
    # The check is real: turning the redirect and secure cookies off is reported.
    result = run_django(
        ["manage.py", "check", "--deploy", "--tag", "security", "--fail-level", "WARNING"],
        {**PRODUCTION_ENV, "SECURE_SSL_REDIRECT": "false", "SECURE_COOKIES": "false"},
    )
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "security.W008" in output
    assert "security.W012" in output


def test_debug_off_turns_on_secure_cookies_hsts_and_the_https_redirect() -> None:
    values = read_settings(
        PRODUCTION_ENV,
        [
            "SESSION_COOKIE_SECURE",
            "CSRF_COOKIE_SECURE",
            "SECURE_SSL_REDIRECT",
            "SECURE_HSTS_SECONDS",
            "SECURE_CONTENT_TYPE_NOSNIFF",
            "X_FRAME_OPTIONS",
            "SECURE_PROXY_SSL_HEADER",
        ],
    )
    assert values["SESSION_COOKIE_SECURE"] is True
    assert values["CSRF_COOKIE_SECURE"] is True
    assert values["SECURE_SSL_REDIRECT"] is True
    assert values["SECURE_HSTS_SECONDS"] >= 31_536_000
    assert values["SECURE_CONTENT_TYPE_NOSNIFF"] is True
    assert values["X_FRAME_OPTIONS"] == "DENY"
    # The proxy header is trusted only when asked for: otherwise any client could claim https.
    assert values["SECURE_PROXY_SSL_HEADER"] is None


def test_behind_a_proxy_the_forwarded_proto_header_is_trusted() -> None:
    values = read_settings(
        {**PRODUCTION_ENV, "SECURE_PROXY_SSL_HEADER": "true", "SECURE_SSL_REDIRECT": "false"},
        ["SECURE_PROXY_SSL_HEADER", "SECURE_SSL_REDIRECT"],
    )
    assert values["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert values["SECURE_SSL_REDIRECT"] is False


def test_debug_off_refuses_to_start_without_a_secret_key() -> None:
    env = {key: value for key, value in PRODUCTION_ENV.items() if key != "SECRET_KEY"}
    result = run_django(["manage.py", "check"], env)
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


@pytest.mark.parametrize("value", ["maybe", "2"])
def test_a_nonsense_boolean_is_refused(value: str) -> None:
    result = run_django(["manage.py", "check"], {**PRODUCTION_ENV, "SECURE_SSL_REDIRECT": value})
    assert result.returncode != 0
    assert "SECURE_SSL_REDIRECT must be a boolean" in result.stderr


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("THROTTLE_AUTH", "30/fortnight"),
        ("THROTTLE_SIGNUP", "abc"),
        ("THROTTLE_HINT", "0/min"),
        ("THROTTLE_AUTH_USERNAME", "30 per min"),
        ("DAILY_DEAL_FIRST_DATE", "2026-13-01"),
        ("SITE_URL", "example.com"),
        ("SITE_URL", "https://example.com/play"),
        ("SITE_URL", "http://127.0.0.1:99999"),
    ],
)
def test_a_bad_setting_stops_manage_py_check_with_its_name(name: str, value: str) -> None:
    result = run_django(["manage.py", "check"], {name: value})
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert "ImproperlyConfigured" in last_line, result.stderr
    assert name in last_line and value in last_line, last_line


def test_with_debug_off_the_api_renders_json_only() -> None:
    # DRF's browsable API (a form for every endpoint) is for development.
    configured = read_settings(PRODUCTION_ENV, ["REST_FRAMEWORK"])["REST_FRAMEWORK"]
    assert configured["DEFAULT_RENDERER_CLASSES"] == ["rest_framework.renderers.JSONRenderer"]
    debug = read_settings({"DEBUG": "true"}, ["REST_FRAMEWORK"])["REST_FRAMEWORK"]
    assert "rest_framework.renderers.BrowsableAPIRenderer" in debug["DEFAULT_RENDERER_CLASSES"]


@pytest.mark.parametrize(
    ("name", "value"), [("DAILY_DEAL_SOLVER_NODES", "0"), ("HINT_SOLVER_SECONDS", "-1")]
)
def test_a_solver_budget_not_above_zero_is_refused(name: str, value: str) -> None:
    result = run_django(["manage.py", "check"], {**PRODUCTION_ENV, name: value})
    assert result.returncode != 0
    assert f"{name} must be above 0" in result.stderr


def test_collectstatic_writes_a_gzip_copy_of_each_script_and_style(tmp_path: Path) -> None:
    # WhiteNoise serves a `.gz` next to a file to the browsers that accept gzip.
    root = tmp_path / "static"
    result = run_django(
        ["manage.py", "collectstatic", "--noinput"],
        {**PRODUCTION_ENV, "STATIC_ROOT": str(root)},
    )
    assert result.returncode == 0, result.stderr
    for name in ["games/play.js", "games/engine.js", "games/site.css"]:
        original = (root / name).read_bytes()
        assert gzip.decompress((root / f"{name}.gz").read_bytes()) == original
    # Names are kept: the pages' modules import each other by name.
    assert (root / "games" / "ui.js").exists()
