"""Reliability suite hooks: tally outcomes per section and write the figures at the end."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability import figures


def _section(nodeid: str) -> str | None:
    name = Path(nodeid.split("::", 1)[0]).stem
    return name.removeprefix("test_") if name.startswith("test_") else None


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "tests/reliability/" not in report.nodeid.replace("\\", "/"):
        return
    section = _section(report.nodeid)
    if section is None:
        return
    outcome = "xfailed" if hasattr(report, "wasxfail") else report.outcome
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        figures.tally(section, outcome, report.duration)
    elif report.when in ("setup", "teardown"):
        figures.tally(section, "", report.duration)  # fixtures' time (a load run, a store)


def pytest_sessionfinish(session: pytest.Session) -> None:
    figures.flush()
