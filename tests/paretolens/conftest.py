"""Fixtures of the CLI tests: the analysis tests' store of real sweeps (`store`, `points`), and the
dashboard tests' store with the web app over it (`web_store`, `client`), each built once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

from dashboard.app import create_app
from ingest.store import Store
from paretolens.settings import GOLDEN_AL_DIR, Settings
from tests.analysis.pointdata import build_store
from tests.dashboard.conftest import build_store as build_web_store


@pytest.fixture(scope="session")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return build_store(tmp_path_factory.mktemp("analysis-store"))


@pytest.fixture(scope="session")
def points(store: Store) -> Callable[..., pl.DataFrame]:
    """points("dsr1") -> that run's canonical points."""

    def get(*run_ids: str) -> pl.DataFrame:
        return store.points(list(run_ids))

    return get


@pytest.fixture(scope="session")
def web_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return build_web_store(tmp_path_factory.mktemp("web-store") / "store")


@pytest.fixture(scope="session")
def client(web_store: Store) -> Any:
    """The real app's Flask test client over `web_store`."""
    settings = Settings(
        store=web_store.root, host="127.0.0.1", token=None, github_token=None, launch_enabled=False
    )
    return create_app(web_store, settings, golden_dir=GOLDEN_AL_DIR).server.test_client()
