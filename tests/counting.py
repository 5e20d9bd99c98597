"""Every collected test runs, and is counted: the session fails when fewer ran than were collected.

Two tests with one node id are one test to pytest-xdist, which schedules by id:
schemathesis named each operation's case after its test function alone, so
under `make test` one case per function ran and the rest never did, silently.
Each such item is given its own id here, and the session compares the tests
that reported a setup (run, skipped or failed) with those collected.
"""

from __future__ import annotations

import pytest
from _pytest.nodeid import coerce_node_id


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if not item.nodeid.endswith("::" + item.name) and item.parent is not None:
            # pytest keeps the id in a structured form, parsed from its text.
            item._id = coerce_node_id(f"{item.parent.nodeid}::{item.name}")


class Count:
    collected: int | None = None
    ran = 0


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: object, ids: list[str]) -> None:
    Count.collected = len(ids)


def pytest_collection_finish(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):
        Count.collected = len(session.items)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "setup":
        Count.ran += 1


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if hasattr(config, "workerinput") or config.option.collectonly or exitstatus != 0:
        return
    if Count.collected is not None and Count.ran < Count.collected:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(
                f"only {Count.ran} of {Count.collected} collected tests ran", red=True
            )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
