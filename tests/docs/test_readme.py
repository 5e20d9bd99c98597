"""The examples of the README and of docs/, run: every fenced block is executed or
checked, so none can drift.

Each block's info string names how it is checked:

- `sh api` (docs/API.md): run in one bash session against a live server
  (uvicorn, on SQLite and on PostgreSQL); a `# → STATUS JSON` line after a command is its expected
  HTTP status and body. In the JSON, `…` stands for any value and objects may
  have more keys than shown.
- `sh cli`: run in the project folder; `# → JSON` is the expected output,
  `# → exit N` the expected exit code.
- `pycon`: run as a doctest.
- `sh quickstart`: `make run` is started on a free port and must serve;
  `make test` is the command that runs this test (`.ci/run` calls it).
- `sh deploy`: docker compose needs a Docker engine, which the test machines
  lack; the block's files and services are checked against the repository.
- `json socket` (docs/SOCKETS.md): checked against the consumers by
  tests/docs/test_sockets_doc.py; `example` (docs/RULES.md) by
  tests/games/rules/test_rules_doc.py.
"""

from __future__ import annotations

import contextlib
import doctest
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import pytest

from tests.servers import (
    ROOT,
    free_port,
    manage,
    process_group_gone,
    processes_with,
    server_env,
    uvicorn,
)

README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w+)(?: (\w+))?\n(.*?)^```$", re.MULTILINE | re.DOTALL)
KINDS = {
    ("sh", "api"), ("sh", "cli"), ("pycon", None), ("sh", "quickstart"), ("sh", "deploy"),
    ("json", "socket"), ("example", None),
}  # fmt: skip
ANY = "…"


def blocks(kind: str, tag: str | None = None) -> list[str]:
    """Every ```KIND TAG block of the README and docs/, in page order."""
    found = [
        m.group(3)
        for page in PAGES
        for m in FENCE.finditer(page.read_text())
        if m.groups()[:2] == (kind, tag)
    ]
    assert found, f"no page has a ```{kind} {tag or ''} block"
    return found


def test_every_block_says_how_it_is_checked() -> None:
    fence = re.compile(r"^```(.*)$", re.MULTILINE)
    for page in PAGES:
        text = page.read_text()
        checked = {m.start() for m in FENCE.finditer(text) if m.groups()[:2] in KINDS}
        # Every opening fence starts a block of a checked kind (closing fences pair with them).
        openings = [m for m in fence.finditer(text)][::2]
        for opening in openings:
            assert opening.start() in checked, (
                f"unchecked block in {page.name}: {opening.group(0)!r}"
            )


# --- Commands and their expectations ------------------------------------------------


def commands(block: str) -> list[tuple[str, str | None]]:
    """(command, expectation) pairs: continued lines joined, `# →` lines attached."""
    result: list[tuple[str, str | None]] = []
    pending = ""
    for line in block.splitlines():
        stripped = line.strip()
        if stripped.startswith("# →"):
            command, _ = result[-1]
            result[-1] = (command, stripped.removeprefix("# →").strip())
            continue
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        pending += line + "\n"
        if not line.endswith("\\"):
            result.append((pending.strip(), None))
            pending = ""
    return result


def parse_expected(text: str) -> Any:
    # A bare … (outside quotes) is any value.
    return json.loads(re.sub(r'(?<!")…(?!")', '"…"', text))


def matches(expected: Any, actual: Any) -> bool:
    if expected == ANY:
        return True
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and matches(value, actual[key]) for key, value in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(matches(e, a) for e, a in zip(expected, actual, strict=True))
        )
    return bool(expected == actual)


def run_session(pairs: list[tuple[str, str | None]], env: dict[str, str]) -> list[tuple[str, str]]:
    """Run the commands in one bash session; each one's (stdout, stderr)."""
    marker = "__README_COMMAND_DONE__"
    script = ["set -u"]
    for command, _ in pairs:
        script += [command, f"echo {marker}", f"echo {marker} >&2"]
    result = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    outs = result.stdout.split(marker + "\n")
    errs = result.stderr.split(marker + "\n")
    assert len(outs) == len(pairs) + 1, f"the session stopped early:\n{result.stderr}"
    return list(zip(outs, errs, strict=False))[: len(pairs)]


# --- sh api -----------------------------------------------------------------------


@contextlib.contextmanager
def fresh_postgres() -> Iterator[str]:
    """A PostgreSQL database of this test's own beside the suite's, dropped afterwards."""
    url = urlsplit(os.environ["DATABASE_URL"])
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    name = f"{url.path.strip('/') or 'easyharp'}_walkthrough_{worker}"
    admin = urlunsplit(url._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(url._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    today = time.strftime("%Y-%m-%d", time.gmtime())
    env = server_env(tmp_path_factory.mktemp("readme") / "db.sqlite3")
    with contextlib.ExitStack() as stack:
        if request.param == "postgres":
            env["DATABASE_URL"] = stack.enter_context(fresh_postgres())
        server = stack.enter_context(uvicorn(env, days=[today]))
        yield server, env


def test_the_api_examples_answer_as_shown(site: Any) -> None:
    server, env = site
    (block,) = blocks("sh", "api")
    pairs = commands(block)
    # The README's host is the quick start's; the status goes to stderr, so
    # that a command that pipes the body somewhere still sees only the body.
    block_env = {**env, "README_HOST": server}
    wrapped = [
        (
            'curl() { command curl -sS -w "%{stderr}__STATUS__ %{http_code}\\n" '
            '"${@//127.0.0.1:8000/$README_HOST}"; }',
            None,
        ),
        *pairs,
    ]
    outputs = run_session(wrapped, block_env)[1:]
    checked = 0
    for (command, expected), (out, err) in zip(pairs, outputs, strict=True):
        statuses = re.findall(r"__STATUS__ (\d+)", err)
        assert "curl: (" not in err, f"{command}\n{err}"
        if expected is None:
            continue
        status, _, body = expected.partition(" ")
        assert statuses and statuses[-1] == status, f"{command}\nstatus {statuses}, shown {status}"
        if body:
            actual = json.loads(out) if out.strip() else None
            assert matches(parse_expected(body), actual), f"{command}\n{out}\nshown: {body}"
        checked += 1
    assert checked >= 10


# --- sh cli -----------------------------------------------------------------------


def test_the_command_line_examples_print_what_is_shown() -> None:
    for block in blocks("sh", "cli"):
        pairs = commands(block)
        for command, expected in pairs:
            result = subprocess.run(
                ["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=300
            )
            if expected is None:
                assert result.returncode == 0, f"{command}\n{result.stderr}"
            elif expected.startswith("exit "):
                assert result.returncode == int(expected.split()[1]), f"{command}\n{result.stderr}"
            else:
                last = result.stdout.strip().splitlines()[-1]
                assert matches(parse_expected(expected), json.loads(last)), f"{command}\n{last}"


# --- pycon ------------------------------------------------------------------------


def test_the_python_examples_run_as_shown() -> None:
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for number, block in enumerate(blocks("pycon")):
        test = parser.get_doctest(block, {}, f"docs block {number}", str(README), 0)
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


# --- sh quickstart ----------------------------------------------------------------


def test_make_run_serves_the_site(tmp_path: Path) -> None:
    (block,) = blocks("sh", "quickstart")
    assert [command for command, _ in commands(block)] == ["make run", "make test"]
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    port = free_port()
    env = server_env(tmp_path / "db.sqlite3")
    del env["DAILY_DEAL_REQUIRE_WIN"]  # as a new user has it: deals the solver wins
    process = subprocess.Popen(
        ["make", "run", f"PORT={port}"], cwd=ROOT, env=env, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            assert process.poll() is None, process.communicate()[0]
            try:
                home = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
                daily = httpx.get(f"http://127.0.0.1:{port}/api/daily/", timeout=5)
                break
            except httpx.TransportError:
                time.sleep(0.5)
        else:
            pytest.fail("make run did not serve within 240 s")
        assert home.status_code == 200
        # The links it hands out (here the page's own, for sharing) name its port.
        assert f'content="http://127.0.0.1:{port}/"' in home.text
        assert daily.status_code == 200 and daily.json()["par"] is not None
        # The job worker runs beside the server: its scheduled jobs run.
        while time.monotonic() < deadline:
            jobs = httpx.get(f"http://127.0.0.1:{port}/healthz/?details=1", timeout=5).json()
            # Anyone sees whether each job worked (staff, when it ran).
            if all(job["ok"] is not None for job in jobs["jobs"] if job["name"] == "close days"):
                break
            time.sleep(0.5)
        else:
            pytest.fail("the job worker ran no job within 240 s")
    finally:
        # As `kill PID` would: the server's own process only, not its group.
        for server in processes_with("devserver.py", f"127.0.0.1:{port}"):
            os.kill(server, signal.SIGTERM)
        process.wait(timeout=30)
    # The worker and the server's autoreloader child stopped with it: nothing
    # of `make run` is left (each of them has this run's database in its environment).
    deadline = time.monotonic() + 30
    while not process_group_gone(process.pid) or processes_with(
        env["DATABASE_URL"], where="environ"
    ):
        assert time.monotonic() < deadline, "processes of make run outlived it"
        time.sleep(0.1)


def test_the_embedded_default_passes_djangos_checks_without_a_warning(tmp_path: Path) -> None:
    # What `make run` prints first (its migrate runs the same checks): the one
    # warning silenced is SQLite's index without included columns (settings.py).
    checked = manage(server_env(tmp_path / "db.sqlite3"), "check", "--database", "default")
    assert checked.stdout.strip() == "System check identified no issues (1 silenced).", (
        checked.stdout + checked.stderr
    )


def test_make_test_runs_in_the_processes_the_readme_names() -> None:
    readme = README.read_text()
    assert "make test TEST_WORKERS=1" in readme and "one process per core" in readme
    commands = {}
    for workers in ("", "TEST_WORKERS=1"):
        result = subprocess.run(
            ["make", "--dry-run", "test", *filter(None, [workers])],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        (commands[workers],) = [line for line in result.stdout.splitlines() if "pytest" in line]
    assert "--numprocesses=auto" in commands[""] and "--dist=loadfile" in commands[""]
    assert "--numprocesses=1 " in commands["TEST_WORKERS=1"]


def test_make_run_refuses_a_taken_port() -> None:
    port = free_port()
    with socket.create_server(("127.0.0.1", port)):
        result = subprocess.run(
            ["make", "run", f"PORT={port}"], cwd=ROOT, capture_output=True, text=True, timeout=120
        )
    assert result.returncode != 0
    assert f"port {port} is in use" in result.stderr


# --- sh deploy --------------------------------------------------------------------


def test_the_deploy_block_names_files_and_services_that_exist() -> None:
    (block,) = blocks("sh", "deploy")
    assert "cp .env.example .env" in block
    assert (ROOT / ".env.example").is_file()
    compose = (ROOT / "docker-compose.yml").read_text()
    named = re.findall(r"--scale (\w+)=", block) + re.findall(r"compose exec ([\w-]+)", block)
    assert "edge" in named
    for service in named:
        assert re.search(rf"^  {service}:$", compose, re.MULTILINE), service
    # What the first line says to set is in .env.example.
    example = (ROOT / ".env.example").read_text()
    for name in re.findall(r"[A-Z][A-Z_]+", block.splitlines()[0].partition("#")[2]):
        assert re.search(rf"^{name}=", example, re.MULTILINE), name


def test_make_test_without_node_says_what_to_install(tmp_path: Path) -> None:
    # A fresh clone has no node_modules yet; a PATH with the tools make needs but not Node.
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("sh", "bash", "msgfmt", "env", "touch"):
        found = shutil.which(tool)
        if found:
            (tools / tool).symlink_to(found)
    result = subprocess.run(
        [str(shutil.which("make")), "-o", ".venv/.installed", "test",
         f"NODE_STAMP={tmp_path}/node_modules/.installed"],
        cwd=ROOT, env={"PATH": str(tools), "HOME": str(tmp_path)},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode != 0
    assert "Node.js 20+ with npm is needed" in result.stderr
    assert "No such file or directory" not in result.stderr
