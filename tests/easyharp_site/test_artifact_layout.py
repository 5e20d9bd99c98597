"""What is shipped holds every app the settings install: the wheel's package list
(pyproject.toml) and the image's copy of the tree (Dockerfile, .dockerignore)."""

from __future__ import annotations

import fnmatch
import tomllib

from django.conf import settings

from tests.paths import ROOT


def project_apps() -> set[str]:
    """The top-level packages of this repository that INSTALLED_APPS names."""
    names = {app.split(".")[0] for app in settings.INSTALLED_APPS}
    return {name for name in names if (ROOT / name / "__init__.py").exists()}


def test_the_wheel_packages_every_installed_app() -> None:
    found = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    patterns = found["find"]["include"]

    missing = {app for app in project_apps() if not any(fnmatch.fnmatch(app, p) for p in patterns)}

    assert project_apps() >= {"easyharp_site", "games", "leaderboards", "leagues", "races"}
    assert missing == set()


def test_the_image_copies_the_whole_tree_less_what_it_does_not_need() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    ignored = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]

    assert "COPY . ." in dockerfile
    for app in [*project_apps(), "deploy", "manage.py", "pyproject.toml", "README.md"]:
        assert not any(fnmatch.fnmatch(app, pattern) for pattern in ignored), app
