"""Fixtures of the page tests: the suite's (`tests.fixtures`), plus stored games,
and for the browser tests a uvicorn server and headless Chromium (`site`).

Today's deal is pinned to deal 4 (`EH1-N-AAAAAAE`), which has a clean win in
the conformance vectors, so the tests can store real won and unfinished games
of the day.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import SyncToAsync
from channels.testing.live import make_application
from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.db import connections
from django.test import Client

from games.models import DailyDeal, Game
from tests.fixtures import DEAL, DEAL_NUMBER, PASSWORD, play_ranked  # noqa: F401 - PASSWORD: imported by the page tests
from tests.servers import UvicornProcess


@pytest.fixture
def submit() -> Callable[..., Game]:
    """Store a game through the services, as the API would: the player's ranked
    game of today the first time (the attempt started just before), then practice."""

    def play(player: AbstractBaseUser, log: list[str] | str, deal: str = DEAL) -> Game:
        return play_ranked(player, log, deal)

    return play


ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Deal 1 (EH1-N-AAAAAAB) deals these face-up cards: 6D 9S 4H 5C 8H 7H 6H 3D JC.
DEAL_1 = "EH1-N-AAAAAAB"
# How long a browser test waits for a state before it fails: generous, since a
# loaded CI machine can take seconds to play a long log; a passing test waits
# only as long as the state takes.
WAIT_MS = 60_000


def _serve_in_child() -> None:
    # The forked server must not share the parent's database sockets, nor
    # asgiref's executor for thread-sensitive code outside a request (the
    # sockets' database reads): once earlier tests in the parent have used it,
    # its worker thread is gone in the child, yet the executor believes it has
    # one idle, and every read would wait for ever.
    connections.close_all()
    SyncToAsync.single_thread_executor = ThreadPoolExecutor(max_workers=1)
    # The browser plays faster than any person: the pages are under test here,
    # not review, whose floor would hold every ranked game off the boards.
    settings.REVIEW_MIN_MS_PER_ACTION = 0


@contextmanager
def serving(django_db_blocker: Any, setup: Callable[[], None]) -> Iterator[str]:
    """The ASGI application under uvicorn, as in production, reading the test
    database: its `host:port` while the block runs. `setup` runs first in the
    server's process."""
    with django_db_blocker.unblock():
        connections.close_all()
        process = UvicornProcess(
            partial(make_application, static_wrapper=ASGIStaticFilesHandler), setup=setup
        )
        process.start()
        if not process.ready.wait(timeout=30):
            process.terminate()
            raise RuntimeError("the test server did not start")
        try:
            yield f"127.0.0.1:{process.port.value}"
        finally:
            process.terminate()
            process.join(timeout=10)


@pytest.fixture(scope="module")
def server(django_db_setup: None, django_db_blocker: Any) -> Iterator[str]:
    with serving(django_db_blocker, _serve_in_child) as address:
        yield address


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the tests' own
    # ORM calls are still plain synchronous code, which Django must allow.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def site(
    server: str, browser: Any, transactional_db: None, today: datetime.date
) -> Iterator[Callable[..., Any]]:
    """Open pages in fresh browser contexts (each its own cookies and storage)."""
    DailyDeal.objects.create(date=today, number=DEAL_NUMBER)
    contexts = []
    violations: list[str] = []

    def open_page(
        path: str = "/",
        *,
        language: str = "en",
        width: int = 1280,
        height: int = 900,
        player: AbstractBaseUser | None = None,
        service_workers: str = "allow",
        timezone_id: str | None = None,
        javascript: bool = True,
        touch: bool = False,
    ):
        """Open `path`; with `player`, signed in as them (a session made here);
        with `javascript=False`, as a browser that runs no script.

        A test that stands in for the server's answers (`page.route`) opens its
        page with `service_workers="block"`: once the site's service worker
        controls a page, its requests no longer pass through the page's routes
        (Playwright's documented limit), and when that happens is a race.
        `timezone_id` sets the browser's clock's zone (`Europe/Amsterdam`). With
        `touch`, a phone's browser: a touch screen and a mobile viewport.
        """
        context = browser.new_context(
            viewport={"width": width, "height": height},
            locale=language,
            service_workers=service_workers,
            timezone_id=timezone_id,
            java_script_enabled=javascript,
            has_touch=touch,
            is_mobile=touch,
        )
        contexts.append(context)
        if player is not None:
            client = Client()
            client.force_login(player)
            cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
            context.add_cookies(
                [{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": f"http://{server}"}]
            )
        page = context.new_page()
        page.errors = []  # type: ignore[attr-defined]
        page.on("pageerror", lambda error: page.errors.append(str(error)))
        page.on("console", partial(_note_policy_violation, violations))
        page.on("dialog", lambda dialog: dialog.accept())
        page.set_default_timeout(WAIT_MS)
        page.goto(f"http://{server}{path}")
        return page

    yield open_page
    for context in contexts:
        context.close()
    # Whatever a test did, nothing on the pages broke the Content-Security-Policy.
    assert violations == []


def _note_policy_violation(violations: list[str], message: Any) -> None:
    if "Content Security Policy" in message.text:
        violations.append(message.text)


# Where the page shows a text: the visible elements whose own text holds it,
# and the texts a style draws before or after an element ("Won!" on a won table).
SHOWN_TIMES = """(text) => [...document.querySelectorAll("body *")].filter((node) =>
    (node.checkVisibility() && !node.closest(".visually-hidden") &&
     [...node.childNodes].some((child) => child.nodeType === 3 && child.textContent.includes(text)))
    || ["::before", "::after"].some((pseudo) =>
         getComputedStyle(node, pseudo).content.includes(text))).length"""

# How many live regions (status lines, alerts, the announcer) hold a text.
SPOKEN_TIMES = """(text) => [...document.querySelectorAll(
    '[aria-live]:not([aria-live="off"]), [role="status"], [role="alert"]')].filter((node) =>
    !node.closest("[hidden]") && node.textContent.includes(text)).length"""


def fill_log_in(page: Any, username: str) -> None:
    """On the log-in page: the player's name and the suite's password, sent."""
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("form.account-form button[type=submit]")


# Screenshots are for a person to look at: written to tests/artifacts/ when
# SCREENSHOTS=1 (or README_SHOTS=1) asks for them. A plain run, as CI's, skips
# them: about 150 pictures of 0.1 s each that nobody opens.
SCREENSHOTS = "1" in (os.environ.get("SCREENSHOTS"), os.environ.get("README_SHOTS"))


def shot(target: Any, name: str) -> None:
    """A picture of a page (all of it) or of one element (a locator), when asked for."""
    if not SCREENSHOTS:
        return
    ARTIFACTS.mkdir(exist_ok=True)
    whole = {"full_page": True} if hasattr(target, "goto") else {}
    target.screenshot(path=str(ARTIFACTS / f"{name}.png"), **whole)
