"""The shipped artifact, booted: the wheel and the image's files, outside the checkout.

As the Dockerfile builds the image, without docker: the tree is copied less what
.dockerignore leaves out, the wheel is built from that copy and installed into a
fresh virtualenv outside the checkout, and from the copy (the image's /app) the
build's and docker-compose.yml's commands run on PostgreSQL (a database of this
test's own) and Redis: `check --deploy`, `compilemessages`, `collectstatic`,
every one-shot job's command, the job worker's until each scheduled job has
run once (and its health check), and the web service's command, which must answer
`/healthz/` and a page. The virtualenv reuses the suite's installed
dependencies (a path file), so it takes seconds; the project itself comes from
the wheel or the copy, never from the checkout.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import entry_points
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import pytest
from django.conf import settings

from tests.deploy.compose import app_services, interpolate, services
from tests.paths import ROOT
from tests.servers import free_port, wait_for_port

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

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


def test_the_wheel_and_the_image_files_boot_on_postgresql_and_redis(
    tmp_path: Path, database: str
) -> None:
    timings: dict[str, float] = {}
    started = time.monotonic()

    def lap(name: str) -> None:
        nonlocal started
        timings[name] = round(time.monotonic() - started, 1)
        print(f"artifact: {name} {timings[name]} s")
        started = time.monotonic()

    app = tmp_path / "app"
    lay_out_image(app)
    assert not (app / "tests").exists() and (app / "leagues" / "__init__.py").exists()
    lap("layout")

    # `pip install .` in /app (its build requirements in isolation, as in the image):
    # the wheel, with every app the settings install.
    dist = tmp_path / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    run([*pip, "wheel", "--no-deps", "-w", str(dist), str(app)],
        os.environ, tmp_path)  # fmt: skip
    (wheel,) = dist.glob("*.whl")
    packed = set(zipfile.ZipFile(wheel).namelist())
    for name in ("easyharp_site", "games", "leaderboards", "leagues", "races", "ranking"):
        assert f"{name}/__init__.py" in packed, name
    assert any(n.startswith("games/templates/") for n in packed)
    assert any(n.startswith("games/static/") for n in packed)
    lap("wheel")

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], os.environ, tmp_path)
    python = venv / "bin" / "python"
    run([*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)],
        os.environ, tmp_path)  # fmt: skip
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
    lap("virtualenv")

    base = {
        "PATH": f"{venv / 'bin'}:{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
    }
    dotenv = {**example_env(), **PRODUCTION}
    env = {**base, **service_env(dotenv, database), "PYTHONPATH": str(app)}

    # Installed, the apps import from the wheel (not the checkout) wherever Python starts.
    where = run([str(python), "-c", "import leagues, games; print(leagues.__file__)"],
                {**base, **service_env(dotenv, database)}, tmp_path)  # fmt: skip
    assert where.strip().startswith(str(own)), where

    # The Dockerfile's build steps, then the checks an operator runs.
    manage = [str(python), "manage.py"]
    run([*manage, "compilemessages"], env, app)
    assert list((app / "locale").glob("*/LC_MESSAGES/django.mo"))
    run([*manage, "collectstatic", "--noinput"], env, app)
    assert (app / "staticfiles" / "games" / "engine.js.gz").is_file()
    deploy_check = run([*manage, "check", "--deploy", "--fail-level", "WARNING"], env, app)
    assert "no issues" in deploy_check
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

    # The web service's command, on a free port, as the edge reaches it.
    port = free_port()
    web = [
        re.sub(r"^--port=\d+$", f"--port={port}", interpolate(str(part), dotenv))
        for part in services()["web"]["command"]
    ]
    assert f"--port={port}" in web
    process = subprocess.Popen(web, cwd=app, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        wait_for_port(port, process)
        lap("web start")
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
    finally:
        process.terminate()
        process.wait(timeout=10)

    assert health.status_code == 200 and health.json() == {"status": "ok"}
    assert page.status_code == 200 and "Easy Harp" in page.text
    assert daily.status_code == 200 and daily.json()["par"] is None  # chosen without the solver
    assert static.status_code == 200
