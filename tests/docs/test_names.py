"""The names the docs give in code formatting exist, so a rename breaks this test
rather than the docs.

Every inline code span of README.md and docs/*.md is read as what it looks
like: a module or object (`games.services.game_store`), a file of the project
(`leaderboards/consumers.py`, `tests/…::test_name`), a management command
(`manage.py check_boards`, or a bare `close_days`), a setting or environment
variable (`DEBUG`, `THROTTLE_*`), a docker compose service (`docker compose
exec web …`, "the `worker` service") or a job (`fold board counts`, the
schedules' names). A bare identifier (`game_submit`, `not_played`) must at least
be a word of the project's code. Spans that look like none of these (URLs,
JSON, prose) are left alone.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import pytest
from django.apps import apps
from django.conf import settings
from django.core.management import get_commands

from easyharp_site.cli import SHORTHANDS
from tests.paths import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PACKAGES = ("easyharp_site", "games", "leaderboards", "leagues", "races", "ranking")
# Folders whose files a doc may name by path.
TREES = (*PACKAGES, "tests", "bench", "deploy", "docs")
# Paths made by a run, not kept in the repository.
MADE = ("tests/artifacts",)
SHELL = ("make", "npm", "node", "docker", "git", "pip", "python", "curl", "uvicorn")
SPAN = re.compile(r"`([^`\n]+)`")
FENCED = re.compile(r"^```.*?^```$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Known:
    commands: frozenset[str]
    variables: frozenset[str]
    services: frozenset[str]
    jobs: frozenset[str]
    queued_jobs: frozenset[str]
    words: frozenset[str]


def _source_files() -> Iterator[Path]:
    for tree in (*PACKAGES, "tests", "bench", "deploy"):
        for pattern in ("*.py", "*.js", "*.mjs", "*.html", "*.conf", "*.template"):
            # Not this folder: its planted wrong names are no words of the project.
            yield from (p for p in (ROOT / tree).rglob(pattern) if "tests/docs" not in p.as_posix())
    yield from (ROOT / name for name in ("docker-compose.yml", "Makefile", "Dockerfile"))


@functools.cache
def known() -> Known:
    """What exists today: read from Django, the compose file and the code."""
    sources = {path: path.read_text(errors="replace") for path in _source_files()}
    words = frozenset(word for text in sources.values() for word in re.findall(r"\w+", text))

    variables = set(dir(settings))
    example = (ROOT / ".env.example").read_text()
    variables |= set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", example, re.MULTILINE))
    for text in sources.values():
        # Environment variables read anywhere, and names defined at the left margin.
        variables |= set(re.findall(r"""environ(?:\.get\(|\[)\s*["']([A-Z][A-Z0-9_]+)""", text))
        variables |= set(re.findall(r"""\benv_\w+\(\s*["']([A-Z][A-Z0-9_]+)""", text))
        variables |= set(re.findall(r"\$\{?([A-Z][A-Z0-9_]+)", text))
        variables |= set(re.findall(r"^\s*([A-Z][A-Z0-9_]+)\s*(?::[^=\n]*)?[?:]?=", text, re.M))

    compose = (ROOT / "docker-compose.yml").read_text()
    services_block = compose.split("\nservices:\n", 1)[1]
    services_block = re.split(r"^\S", services_block, maxsplit=1, flags=re.MULTILINE)[0]
    services = frozenset(re.findall(r"^  ([\w-]+):$", services_block, re.MULTILINE))

    # The jobs' names, as each app's `tasks.schedule()` stores them after `migrate`.
    scheduled: list[str] = []
    for config in apps.get_app_configs():
        if config.name in PACKAGES and importlib.util.find_spec(f"{config.name}.tasks"):
            tasks = importlib.import_module(f"{config.name}.tasks")
            with mock.patch.object(
                tasks, "job_schedule", lambda **job: scheduled.append(job["name"])
            ):
                tasks.schedule()
    queued = frozenset(
        name
        for text in sources.values()
        for name in re.findall(r"""name=f["']([a-z ]+?) \{""", text)
    )
    return Known(
        commands=frozenset(get_commands()),
        variables=frozenset(variables),
        services=services,
        jobs=frozenset(scheduled),
        queued_jobs=queued,
        words=words,
    )


def _module_object_exists(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def _path_problem(span: str) -> str | None:
    path, _, test = span.partition("::")
    clean = path.rstrip("/")
    if clean.startswith(MADE) or clean.split("/")[0] not in TREES:
        return None
    if not (ROOT / clean).exists():
        return f"no file or folder {path}"
    if test and not re.search(rf"def {re.escape(test)}\b", (ROOT / clean).read_text()):
        return f"no test {test} in {path}"
    return None


def problem(span: str, after: str = "", names: Known | None = None) -> str | None:
    """What is wrong with the name `span` gives (None: it exists, or names nothing
    this test knows how to check). `after` is the text that follows the span."""
    names = names or known()
    if any(mark in span for mark in "{<…$"):
        # A template: check its fixed head only where it is a job ("mail <id>").
        head = span.split(" <", 1)[0]
        if re.fullmatch(r"[a-z]+", head) and span.endswith("<id>"):
            return None if head in names.queued_jobs else f"no job queued as {head!r}"
        return None
    if span.startswith("docker compose"):
        named = re.findall(r"\b(?:exec|logs|run|restart|stop) ([\w-]+)", span)
        named += re.findall(r"--scale ([\w-]+)=", span)
        missing = [s for s in named if s not in names.services]
        if missing:
            return f"no compose service {missing[0]}"
    command = re.search(r"\bmanage\.py ([\w-]+)", span)
    if command:
        name = command.group(1)
        return None if name in names.commands else f"no management command {name}"
    if span.startswith("docker compose"):
        return None
    if re.fullmatch(rf"(?:{'|'.join(PACKAGES)})(?:\.\w+)+", span):
        return None if _module_object_exists(span) else f"no module or object {span}"
    if re.fullmatch(r"[\w.-]+/[\w./-]*(?:::\w+)?", span):
        return _path_problem(span)
    # A setting or variable: upper case with an underscore (one word is as often
    # SQL or HTTP: `BEGIN`, `PATCH`), `DEBUG` besides; `X_*` is a family of them.
    variable = re.fullmatch(r"([A-Z][A-Z0-9_]*[A-Z0-9_])(\*|=\S*)?", span)
    if variable and ("_" in variable.group(1) or variable.group(1) == "DEBUG"):
        name, rest = variable.group(1), variable.group(2) or ""
        if rest == "*":
            return None if any(v.startswith(name) for v in names.variables) else f"no {span}"
        return None if name in names.variables else f"no setting or variable {name}"
    # The installed command: its own subcommands, or a management command's name.
    easyharp = re.fullmatch(r"easyharp(?: manage)? ([\w-]+)(?: .*)?", span)
    if easyharp:
        name = easyharp.group(1)
        own = {"web", *SHORTHANDS}
        return None if name in own or name in names.commands else f"no easyharp command {name}"
    if re.fullmatch(r"[a-z]+(?: [a-z]+)+", span) and span.split()[0] not in SHELL:
        return None if span in names.jobs else f"no job named {span!r}"
    if re.fullmatch(r"[a-z][\w-]*", span) and re.match(r" (?:service|replicas?)\b", after):
        return None if span in names.services else f"no compose service {span}"
    bare = re.fullmatch(r"([a-z][a-z0-9]*(?:_[a-z0-9]+)+)( .*)?", span)
    if bare:
        name, args = bare.group(1), (bare.group(2) or "").strip()
        if args.startswith(("--", "[")):
            return None if name in names.commands else f"no management command {name}"
        return None if name in names.words or name in names.commands else f"no name {name}"
    return None


def problems(text: str, names: Known | None = None) -> list[str]:
    """Every span of a page's text whose name does not exist."""
    prose = FENCED.sub("", text)
    found = []
    for match in SPAN.finditer(prose):
        reason = problem(match.group(1), prose[match.end() : match.end() + 20], names)
        if reason:
            found.append(f"`{match.group(1)}`: {reason}")
    return found


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_every_name_a_page_gives_exists(page: Path) -> None:
    assert problems(page.read_text()) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("run `manage.py check_bords` by hand", "no management command check_bords"),
        ("`check_bords --repair` mends it", "no management command check_bords"),
        ("`docker compose exec webb python manage.py migrate`", "no compose service webb"),
        ("the `workers` service runs them", "no compose service workers"),
        (
            "`games.services.game_stored` stores it",
            "no module or object games.services.game_stored",
        ),
        ("`leaderboards.mirrors`", "no module or object leaderboards.mirrors"),
        ("see `leaderboards/consumer.py`", "no file or folder leaderboards/consumer.py"),
        ("`tests/games/test_daily.py::test_nothing_like_this`", "no test test_nothing_like_this"),
        ("set `LIVE_BOARD_REFRESH_SECOND`", "no setting or variable LIVE_BOARD_REFRESH_SECOND"),
        ("`THROTTLES_*`", "no THROTTLES_*"),
        ("the `fold board count` job", "no job named 'fold board count'"),
        ("a `mails <id>` job", "no job queued as 'mails'"),
        ("`close_dayz` closes it", "no name close_dayz"),
        ("`easyharp wrker` runs the jobs", "no easyharp command wrker"),
        ("`easyharp manage check_bords`", "no easyharp command check_bords"),
    ],
)
def test_a_planted_wrong_name_is_found(text: str, expected: str) -> None:
    (found,) = problems(text)
    assert expected in found


def test_the_right_names_pass_the_same_checks() -> None:
    text = (
        "`manage.py check_boards`, `check_boards --repair`, `docker compose exec web python "
        "manage.py migrate`, the `worker` service, `games.services.game_store`, "
        "`leaderboards.mirror`, `leaderboards/consumers.py`, "
        "`tests/games/test_daily.py::test_reads_never_create_a_day`, "
        "`LIVE_BOARD_REFRESH_SECONDS`, `THROTTLE_*`, `fold board counts`, `mail <id>`, "
        "`close_days`, `easyharp web --port=9000`, `easyharp worker`, "
        "`easyharp prepare_daily_deals --days 2`, `easyharp manage check_boards`"
    )
    assert problems(text) == []
