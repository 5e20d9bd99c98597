"""docker-compose.yml: every long-running service is ordered, restarted and health-checked,
and the edge's settings meet the template and the web service's trust."""

from __future__ import annotations

import re

from tests.deploy.compose import services
from tests.paths import ROOT

TEMPLATE = ROOT / "deploy" / "nginx" / "easyharp.conf.template"


def long_running() -> dict[str, dict[str, object]]:
    return {name: s for name, s in services().items() if s.get("restart") != "no"}


def test_every_long_running_service_restarts_and_has_a_health_check() -> None:
    assert {"postgres", "redis", "web", "edge"} <= set(long_running())
    for name, service in long_running().items():
        assert service.get("restart") in {"unless-stopped", "always"}, name
        check = service.get("healthcheck")
        assert isinstance(check, dict) and check.get("test"), name


def test_every_service_of_ours_waits_for_what_it_needs() -> None:
    ours = {name: s for name, s in services().items() if "build" in s}
    assert {"migrate", "web", "edge"} <= set(ours)
    for name, service in ours.items():
        assert service.get("depends_on"), name
    # Nothing of the app starts before the migrations are done.
    for name, service in ours.items():
        if name not in {"migrate", "edge"}:
            needs = service["depends_on"]
            assert needs["migrate"]["condition"] == "service_completed_successfully", name


def test_a_job_is_healthy_only_while_its_runs_succeed() -> None:
    # Each looping job marks a file after a successful run; its check asks how old it is.
    for name, service in long_running().items():
        command = " ".join(map(str, service.get("command") or []))
        if "while true" not in command:
            continue
        (marked,) = re.findall(r"&& touch (\S+);", command)
        check = " ".join(service["healthcheck"]["test"])  # type: ignore[index]
        assert f"find {marked} -mmin" in check, name


def test_the_edge_sets_every_variable_of_its_template() -> None:
    needed = set(re.findall(r"\$\{(\w+)\}", TEMPLATE.read_text()))
    edge = services()["edge"]
    assert needed and needed <= set(edge["environment"])


def test_the_web_service_trusts_forwarded_headers_from_the_edge_alone() -> None:
    edge_address = re.sub(
        r"\$\{\w+:-([^}]*)\}", r"\1", services()["edge"]["networks"]["default"]["ipv4_address"]
    )
    flags = [str(flag) for flag in services()["web"]["command"]]
    (trusted,) = [f for f in flags if f.startswith("--forwarded-allow-ips=")]
    assert re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", trusted) == f"--forwarded-allow-ips={edge_address}"
    # Only the edge is published; the web service is reached through it.
    assert "ports" not in services()["web"] and services()["edge"]["ports"]
