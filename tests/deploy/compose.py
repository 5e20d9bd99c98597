"""docker-compose.yml as docker compose reads it: its services, `${VAR:-default}` filled in."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from tests.paths import ROOT

COMPOSE = ROOT / "docker-compose.yml"
VARIABLE = re.compile(r"\$\$|\$\{(\w+)(?:(:?[-?])([^}]*))?\}")


def services() -> dict[str, dict[str, Any]]:
    """Each service's settings (the `x-app` anchors merged in), as written."""
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return dict(loaded["services"])


def interpolate(text: str, env: Mapping[str, str]) -> str:
    """`text` with compose's `${VAR}`, `${VAR:-default}` and `${VAR:?error}` filled from env."""

    def fill(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name, kind, rest = match.groups()
        value = env.get(name, "")
        if kind in {":-", "-"} and not value:
            return str(rest)
        if kind in {":?", "?"} and not value:
            raise KeyError(f"{name}: {rest}")
        return value

    return VARIABLE.sub(fill, text)


def app_services() -> dict[str, dict[str, Any]]:
    """The services run from the app image: the web service and the jobs."""
    return {
        name: service
        for name, service in services().items()
        if service.get("image") == services()["web"]["image"]
    }
