"""Fixtures of the runner tests: a store whose jobs are stopped when the test ends, settings,
a real Slurm cluster.

Every job a test leaves behind has its worker and executors stopped (by their recorded pids).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ingest.store import Store
from tests.runner.slurm_cluster import ClusterError, SlurmCluster
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


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    """A real one-node Slurm cluster (tests/runner/slurm_cluster.py), stopped at the end.

    ``SLURM_CONF`` points at it while it runs, so the runner's workers (which inherit this
    process's environment) submit to it.
    """
    try:
        cluster = SlurmCluster.start(tmp_path_factory.mktemp("slurm"))
    except ClusterError as exc:
        pytest.fail(str(exc), pytrace=False)
    old = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = str(cluster.conf)
    try:
        yield cluster
    finally:
        if old is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = old
        cluster.stop()
