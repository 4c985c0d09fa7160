"""Fixtures of the runner tests: a store whose jobs are stopped when the test ends, settings.

Every job a test leaves behind has its worker and executors stopped (by their recorded pids).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ingest.store import Store
from tests.runner.support import FakeSettings, stop_jobs


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    st = Store(tmp_path / "store")
    yield st
    stop_jobs(st)


@pytest.fixture
def counts(tmp_path: Path) -> Path:
    d = tmp_path / "counts"
    d.mkdir()
    return d


@pytest.fixture
def settings() -> FakeSettings:
    return FakeSettings()
