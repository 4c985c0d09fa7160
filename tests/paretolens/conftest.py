"""Fixtures of the CLI tests: the analysis tests' store of real sweeps (`store`, `points`), and the
dashboard tests' store with the web app over it (`web_store`, `client`), each built once."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from dashboard.app import create_app
from ingest.bundled import GOLDEN_AL_DIR
from ingest.store import Store
from paretolens.settings import Settings

# The analysis tests' fixtures, the same objects (not copies).
from tests.analysis.conftest import points, store  # noqa: F401
from tests.dashboard.conftest import build_store as build_web_store


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


@pytest.fixture(autouse=True)
def _unfreeze_the_heap() -> Iterator[None]:
    """`paretolens serve` and `paretolens.wsgi` freeze the process's heap once the app is built
    (`dashboard.app.settle_heap`); run here in the test process, that is undone after each test
    so the session's garbage stays collectable."""
    yield
    gc.unfreeze()
