"""The API reference page, `/api/docs/`, as production serves it.

A server of its own with production's settings (`DEBUG` off, the static files
collected and served by WhiteNoise, uvicorn with compose's flags) on a fresh
SQLite file: Chromium opens the page, Swagger UI (drf-spectacular-sidecar's
files, served by the site) lists the endpoints of the schema, and nothing on
the page breaks the Content-Security-Policy or loads from another site.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.servers import manage, server_env, uvicorn
from tests.web.conftest import WAIT_MS, shot

pytestmark = pytest.mark.browser

PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": "docs-" + "q7Lw!e" * 12,
    "DAILY_DEAL_SALT": "an-api-docs-test-salt",
    "ALLOWED_HOSTS": "127.0.0.1",
    # Plain HTTP on loopback, as docs/DEPLOY.md's trial without the edge.
    "SECURE_SSL_REDIRECT": "false",
    "SECURE_COOKIES": "false",
    "SECURE_HSTS_SECONDS": "0",
}


@pytest.fixture(scope="module")
def production(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("api-docs")
    env = server_env(
        folder / "db.sqlite3",
        **PRODUCTION,
        STATIC_ROOT=str(folder / "static"),
        SITE_URL="http://127.0.0.1",
    )
    manage(env, "collectstatic", "--noinput")
    with uvicorn(env) as address:
        yield address


def test_the_api_reference_lists_the_endpoints_under_production_settings(
    production: str, browser: Any
) -> None:
    page_answer = httpx.get(f"http://{production}/api/docs/")
    assert page_answer.status_code == 200
    policy = page_answer.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "style-src 'self'" in policy

    context = browser.new_context()
    page = context.new_page()
    problems: list[str] = []
    foreign: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on(
        "console",
        lambda message: problems.append(message.text) if message.type == "error" else None,
    )
    page.on(
        "request",
        lambda request: (
            None
            if request.url.startswith(f"http://{production}/") or request.url.startswith("data:")
            else foreign.append(request.url)
        ),
    )
    page.set_default_timeout(WAIT_MS)
    try:
        page.goto(f"http://{production}/api/docs/")
        page.wait_for_selector(".swagger-ui .opblock-summary-path")
        paths = page.locator(".opblock-summary-path").all_inner_texts()
        # Swagger UI's script and style are the site's own static files.
        assets = page.evaluate(
            "() => [...document.querySelectorAll('script[src], link[rel=stylesheet]')]"
            ".map((node) => node.src || node.href)"
        )
        shot(page, "api-docs-production")
    finally:
        context.close()

    listed = {path.replace("\u200b", "").strip() for path in paths}
    for endpoint in ("/api/games/", "/api/daily/", "/api/daily/{date}/leaderboard/", "/api/races/"):
        assert endpoint in listed, sorted(listed)
    assert any("/static/drf_spectacular_sidecar/swagger-ui-dist/" in asset for asset in assets), (
        assets
    )
    assert problems == [] and foreign == []
