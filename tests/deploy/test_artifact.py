"""The shipped artifact, booted: the wheel, installed, run by its `easyharp` command
with no source tree anywhere.

As the Dockerfile builds the image, without docker: the tree is copied less what
.dockerignore leaves out, the wheel is built from that copy by the build
stage's script (translations compiled in) and installed into a fresh virtualenv
outside the checkout; every command then runs in an empty folder of its own
(the image's /app, which holds only the health checks), with no PYTHONPATH.

On SQLite, as on a host without docker: `easyharp migrate`, `collectstatic`,
`check` and `web` with the settings in an EASYHARP_ENV_FILE, a page in Spanish
and the collected static files. On PostgreSQL (a database of this test's own)
and Redis, docker-compose.yml's commands: every one-shot job's, the job
worker's until each scheduled job has run once (and its health check), and the
web service's, which must answer `/healthz/` and a page, as two replicas: a
board socket on one sees a game submitted through the other. The virtualenv
reuses the suite's installed dependencies (a path file), so it takes seconds;
the project itself comes from the wheel, never from the checkout.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import tomllib
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import pytest
import websockets
from django.conf import settings

from tests.deploy.compose import app_services, interpolate, services
from tests.fixtures import PASSWORD
from tests.paths import ROOT
from tests.servers import free_port, wait_for_port

# The wheel's packages, as pyproject.toml finds them ("games*": games and its subpackages).
PACKAGES = [
    pattern.removesuffix("*")
    for pattern in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"
    ]["find"]["include"]
]

# What an operator writes into .env on top of .env.example (the README's production section).
PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": "k3y-" + "x9Qz!v" * 12,
    "DAILY_DEAL_SALT": "an-artifact-test-salt",
    "ALLOWED_HOSTS": "localhost",
    "SITE_URL": "https://localhost",
    "POSTGRES_PASSWORD": "unused",
    # The test's address stands for the edge's.
    "FORWARDED_ALLOW_IPS": "127.0.0.1",
    # Deals chosen without the solver: its seconds per deal are measured elsewhere.
    "DAILY_DEAL_REQUIRE_WIN": "false",
}


def dockerignore_rule() -> Callable[[str], bool]:
    """Whether a path (relative, with `/`) is left out of the image, by Docker's rules:
    `*` stays within a folder, `**` crosses folders, the last matching line wins
    (`!` keeps), and a folder left out takes its contents with it."""
    rules = []
    for line in (ROOT / ".dockerignore").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        keep = line.startswith("!")
        pattern = line.removeprefix("!").strip("/")
        regex = "".join(
            ".*" if part == "**" else "[^/]*" if part == "*" else "[^/]" if part == "?"
            else re.escape(part)
            for part in re.split(r"(\*\*|\*|\?)", pattern)
        )  # fmt: skip
        rules.append((re.compile(regex.replace(".*/", "(.*/)?") + "$"), keep))

    def left_out(path: str) -> bool:
        parts = path.split("/")
        for depth in range(1, len(parts) + 1):
            prefix = "/".join(parts[:depth])
            verdict = None
            for regex, keep in rules:
                if regex.match(prefix):
                    verdict = not keep
            if verdict:
                return True
        return False

    return left_out


def lay_out_image(target: Path) -> None:
    """`COPY . .`: the checkout's files less .dockerignore's, into `target`."""
    left_out = dockerignore_rule()

    def ignore(folder: str, names: list[str]) -> set[str]:
        relative = Path(folder).relative_to(ROOT).as_posix()
        prefix = "" if relative == "." else relative + "/"
        return {name for name in names if left_out(prefix + name)}

    shutil.copytree(ROOT, target, ignore=ignore, symlinks=True)


def run(command: list[str], env: Mapping[str, str], cwd: Path, timeout: float = 300) -> str:
    result = subprocess.run(
        command, cwd=cwd, env=dict(env), capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, f"{command} failed:\n{result.stdout}{result.stderr}"
    return result.stdout + result.stderr


def worker_runs_every_schedule(
    command: list[str], env: Mapping[str, str], cwd: Path, database: str
) -> None:
    """Start the worker's command and wait until every schedule `migrate` stored
    has run once and worked (its task saved as a success); then stop it as
    compose does (SIGTERM), and see it end."""
    log = cwd.parent / "worker.log"
    with log.open("w") as output:
        process = subprocess.Popen(command, cwd=cwd, env=dict(env), stdout=output,
                                   stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    try:
        with psycopg.connect(database, autocommit=True) as connection:
            schedules = {
                func for (func,) in connection.execute("SELECT func FROM django_q_schedule")
            }
            assert len(schedules) >= 5, schedules
            deadline = time.monotonic() + 240
            while True:
                ran = {
                    func: success
                    for func, success in connection.execute(
                        "SELECT func, success FROM django_q_task WHERE func = ANY(%s)",
                        [list(schedules)],
                    )
                }
                if set(ran) == schedules or process.poll() is not None:
                    break
                assert time.monotonic() < deadline, (
                    f"ran {sorted(ran)} of {sorted(schedules)}:\n{log.read_text()[-3000:]}"
                )
                time.sleep(0.5)  # polled: the state waited for is the tasks' rows
        assert process.poll() is None, f"the worker stopped:\n{log.read_text()[-3000:]}"
        assert all(ran.values()), f"{ran}:\n{log.read_text()[-6000:]}"
    finally:
        process.terminate()  # the cluster's main process stops the others
        try:
            process.wait(timeout=60)
        finally:
            # Whatever happened, none of its processes outlives the test.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)


@pytest.fixture
def database() -> Iterator[str]:
    """A fresh PostgreSQL database for the artifact, dropped afterwards."""
    url = urlsplit(os.environ["DATABASE_URL"])
    name = (
        f"{url.path.strip('/') or 'easyharp'}_artifact_{os.environ.get('PYTEST_XDIST_WORKER', '')}"
    )
    admin = urlunsplit(url._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(url._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def example_env() -> dict[str, str]:
    """.env.example's settings."""
    env = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, value = line.partition("=")
            env[name.strip()] = value.strip()
    return env


def service_env(dotenv: Mapping[str, str], database: str, service: str = "web") -> dict[str, str]:
    """An app service's environment: .env, then docker-compose.yml's own for
    it (the PostgreSQL and Redis addresses are this test's)."""
    written = services()[service]["environment"]
    env = {**dotenv, **{name: interpolate(str(value), dotenv) for name, value in written.items()}}
    env.update({"DATABASE_URL": database, "REDIS_URL": str(settings.REDIS_URL)})
    return env


def packed_files() -> set[str]:
    """What the wheel must hold: the apps' files kept in git (code, migrations,
    management commands, templates, static sources, the translations' catalogues)."""
    listed = subprocess.run(
        ["git", "ls-files", *PACKAGES], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return {name for name in listed if (ROOT / name).is_file()}


@dataclass(frozen=True)
class Installed:
    """The wheel, installed into its own virtualenv, and the image's health checks."""

    wheel: Path
    venv: Path
    health_checks: Path

    def env(self, home: Path, **variables: str) -> dict[str, str]:
        """An environment that reaches the virtualenv's commands and nothing of the checkout."""
        return {
            "PATH": f"{self.venv / 'bin'}:{os.environ['PATH']}",
            "HOME": str(home),
            "LANG": "C.UTF-8",
            **variables,
        }


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The Dockerfile's build stage (deploy/build-wheel.sh in the copied tree), then
    its app stage: the wheel installed, and the health checks copied, nothing else."""
    tmp_path = tmp_path_factory.mktemp("artifact")
    tree = tmp_path / "tree"
    lay_out_image(tree)
    assert not (tree / "tests").exists() and (tree / "leagues" / "__init__.py").exists()

    dist = tmp_path / "dist"
    run(["sh", "deploy/build-wheel.sh", str(dist)],
        {**os.environ, "PYTHON": sys.executable}, tree)  # fmt: skip
    (wheel,) = dist.glob("*.whl")
    packed = set(zipfile.ZipFile(wheel).namelist())
    assert packed_files() - packed == set()
    for language in ("es", "nl"):
        assert f"easyharp_site/locale/{language}/LC_MESSAGES/django.mo" in packed, language

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], os.environ, tmp_path)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    run([*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)],
        os.environ, tmp_path)  # fmt: skip
    # pip wrote the wheel's own command from its entry point.
    assert (venv / "bin" / "easyharp").is_file()
    # The dependencies, already installed for the suite, after the virtualenv's own
    # packages, with their commands (uvicorn) as pip would have written them.
    (own,) = venv.glob("lib/python*/site-packages")
    (own / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    for entry in entry_points(group="console_scripts"):
        script = venv / "bin" / entry.name
        if not script.exists():
            module, _, function = entry.value.partition(":")
            script.write_text(
                f"#!{python}\nimport sys\nfrom {module} import {function.split('.')[0]}\n"
                f"sys.exit({function}())\n"
            )
            script.chmod(0o755)

    # The app stage's only files from the tree.
    health_checks = tmp_path / "health-checks"
    health_checks.mkdir()
    for name in ("healthcheck.py", "worker_healthcheck.py"):
        shutil.copy(tree / "deploy" / name, health_checks / name)
    shutil.rmtree(tree)

    result = Installed(wheel, venv, health_checks)
    # Installed, the apps import from the wheel (not the checkout) wherever Python starts.
    where = run([str(python), "-c", "import leagues, easyharp_site; print(leagues.__file__)"],
                result.env(tmp_path), tmp_path)  # fmt: skip
    assert where.strip().startswith(str(own)), where
    return result


def test_the_installed_wheel_serves_the_site_in_spanish_on_sqlite(
    installed: Installed, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    port = free_port()
    settings_file = tmp_path / "easyharp.env"
    written = {
        **{k: v for k, v in PRODUCTION.items() if k != "POSTGRES_PASSWORD"},
        "DATABASE_URL": f"sqlite:///{site / 'db.sqlite3'}",
        "SECURE_PROXY_SSL_HEADER": "true",
        "STATIC_URL": "/static/7/",
        "WEB_HOST": "127.0.0.1",
        "WEB_PORT": str(port),
    }
    settings_file.write_text(
        "# The host's settings\n" + "".join(f'{k}="{v}"\n' for k, v in written.items())
    )
    env = installed.env(tmp_path, EASYHARP_ENV_FILE=str(settings_file))

    run(["easyharp", "migrate"], env, site)
    run(["easyharp", "prepare_daily_deals", "--days", "1"], env, site)
    run(["easyharp", "collectstatic", "--noinput"], env, site)
    # Installed, the collected files go to the working folder.
    assert (site / "staticfiles" / "games" / "engine.js.gz").is_file()
    assert "no issues" in run(["easyharp", "check"], env, site)

    process = subprocess.Popen(
        ["easyharp", "web"], cwd=site, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        wait_for_port(port, process)
        proxied = {"Host": "localhost", "X-Forwarded-Proto": "https"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=proxied, timeout=30) as http:
            page = http.get("/", headers={"Accept-Language": "es"})
            english = http.get("/", headers={"Accept-Language": "en"})
            static = http.get("/static/7/games/site.css", headers={"Accept-Encoding": "gzip"})
    finally:
        process.terminate()
        process.wait(timeout=10)

    assert page.status_code == 200 and '<html lang="es"' in page.text
    assert "Jugar el reparto de hoy" in page.text and "Play today's deal" not in page.text
    assert "Play today's deal" in english.text
    # The collected copy, gzipped at collectstatic, as production serves it.
    assert static.status_code == 200 and static.headers["content-encoding"] == "gzip"
    assert "max-age" in static.headers["cache-control"]


@pytest.mark.postgres
@pytest.mark.redis
def test_the_installed_wheel_runs_compose_s_commands_on_postgresql_and_redis(
    installed: Installed, tmp_path: Path, database: str
) -> None:
    timings: dict[str, float] = {}
    started = time.monotonic()

    def lap(name: str) -> None:
        nonlocal started
        timings[name] = round(time.monotonic() - started, 1)
        print(f"artifact: {name} {timings[name]} s")
        started = time.monotonic()

    # The image's /app: nothing of the tree but the health checks.
    app = tmp_path / "app"
    shutil.copytree(installed.health_checks, app / "deploy")
    dotenv = {**example_env(), **PRODUCTION}
    env = {**installed.env(tmp_path), **service_env(dotenv, database)}

    # The image's build step, then the check an operator runs.
    run(["easyharp", "collectstatic", "--noinput"], env, app)
    assert (app / "staticfiles" / "games" / "engine.js.gz").is_file()
    assert "no issues" in run(["easyharp", "check"], env, app)
    lap("build and check")

    # Each one-shot job's command, as written in docker-compose.yml, to its end
    # (migrate first); then the job worker's, until every scheduled job has run
    # once and worked, and its health check says so.
    jobs = {name: s for name, s in app_services().items() if name != "web"}
    one_shot = sorted(
        (name for name, s in jobs.items() if s.get("restart") == "no"),
        key=lambda name: name != "migrate",
    )
    assert one_shot[0] == "migrate" and "worker" in jobs
    for name in one_shot:
        run([interpolate(str(part), dotenv) for part in jobs[name]["command"]], env, app)
        lap(f"job {name}")
    for name in sorted(set(jobs) - set(one_shot)):
        own_env = {**env, **service_env(dotenv, database, name)}
        worker_runs_every_schedule(
            [interpolate(str(part), dotenv) for part in jobs[name]["command"]],
            own_env,
            app,
            database,
        )
        health = [interpolate(str(part), dotenv) for part in jobs[name]["healthcheck"]["test"][1:]]
        run([part.replace("/app/", f"{app}/") for part in health], env, app)
        lap(f"service {name}")

    # The web service's command, on a free port (WEB_PORT, as the health check
    # asks it), as the edge reaches it.
    port = free_port()
    # A game of one action ranks at once (this test plays faster than any person), and
    # only the announcement of a change moves a board (no periodic re-read meanwhile).
    web_env = {**env, "WEB_HOST": "127.0.0.1", "WEB_PORT": str(port),
               "REVIEW_MIN_MS_PER_ACTION": "0", "LIVE_BOARD_REFRESH_SECONDS": "3600"}  # fmt: skip
    web = [interpolate(str(part), dotenv) for part in services()["web"]["command"]]
    process = subprocess.Popen(web, cwd=app, env=web_env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    # A second replica of the web service, as compose scales it.
    second_port = free_port()
    second_env = {**web_env, "WEB_PORT": str(second_port)}
    second = subprocess.Popen(web, cwd=app, env=second_env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        wait_for_port(port, process)
        wait_for_port(second_port, second)
        lap("web start")
        run(["python", str(app / "deploy" / "healthcheck.py")], web_env, app)
        proxied = {
            "Host": "localhost",
            "X-Forwarded-Proto": "https",
            "X-Forwarded-For": "192.0.2.1",
        }
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=proxied, timeout=30) as http:
            health = http.get("/healthz/")
            page = http.get("/")
            daily = http.get("/api/daily/")
            static = http.get(f"/static/{interpolate('${RELEASE:-0}', dotenv)}/games/site.css")
        lap("requests")
        update = asyncio.run(board_sees_a_game_of_the_other_replica(port, second_port, proxied))
        lap("two replicas")
    finally:
        for web_process in (process, second):
            web_process.terminate()
            web_process.wait(timeout=10)

    assert health.status_code == 200 and health.json() == {"status": "ok"}
    assert page.status_code == 200 and "Easy Harp" in page.text
    assert daily.status_code == 200 and daily.json()["par"] is None  # chosen without the solver
    assert static.status_code == 200
    assert (update["type"], update["total"]) == ("update", 1)
    assert update["entries"][0]["player"] == "zoe"


async def board_sees_a_game_of_the_other_replica(
    port: int, other_port: int, proxied: dict[str, str]
) -> dict[str, Any]:
    """A board socket on the replica at `port` (as the edge passes it on), then a player
    signed up and their game of today submitted through the replica at `other_port`:
    the socket's first update."""
    headers = {**proxied, "X-Forwarded-For": "192.0.2.2"}
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{other_port}", headers=headers, timeout=30
    ) as other:
        day = (await other.get("/api/daily/")).json()
        path = f"/ws/daily/{day['date']}/leaderboard/?order=score"
        async with websockets.connect(
            f"ws://localhost:{port}{path}",
            origin=f"https://localhost:{port}",  # type: ignore[arg-type]
            additional_headers={"X-Forwarded-Proto": "https", "X-Forwarded-For": "192.0.2.3"},
        ) as socket:
            snapshot = json.loads(await asyncio.wait_for(socket.recv(), timeout=30))
            assert (snapshot["type"], snapshot["total"]) == ("snapshot", 0), snapshot
            signed_up = await other.post(
                "/api/auth/register/", json={"username": "zoe", "password": PASSWORD}
            )
            assert signed_up.status_code == 201, signed_up.text
            token = {"Authorization": f"Token {signed_up.json()['token']}"}
            started = await other.post(f"/api/daily/{day['date']}/attempt/", headers=token)
            assert started.status_code == 201, started.text
            stored = await other.post(
                "/api/games/", json={"deal": day["deal"], "log": "S"}, headers=token
            )
            assert stored.status_code == 201, stored.text
            while True:
                message = json.loads(await asyncio.wait_for(socket.recv(), timeout=30))
                if message["type"] == "update":
                    return dict(message)
