"""Fixtures of the analysis tests: one store with the real sweeps, ingested once per session."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl
import pytest

from ingest.store import Store
from tests.analysis.pointdata import build_store


@pytest.fixture(scope="session")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return build_store(tmp_path_factory.mktemp("analysis-store"))


@pytest.fixture(scope="session")
def points(store: Store) -> Callable[..., pl.DataFrame]:
    """points("dsr1") -> that run's canonical points."""

    def get(*run_ids: str) -> pl.DataFrame:
        return store.points(list(run_ids))

    return get
