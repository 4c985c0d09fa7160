"""A store built from the real fixtures, the app over it, and (for browser tests) a live server
and a headless Debian chromium."""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from dash import Dash

from dashboard.app import create_app
from dashboard.context import AppContext
from dashboard.fetch import Fetcher
from ingest.bundled import GOLDEN_AL_DIR
from ingest.contract.schema import RunCol
from ingest.pipeline import ingest_paths
from ingest.store import Store
from paretolens.commands.common import seed_master_configs
from paretolens.settings import Settings
from views.source import DataSource

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "inferencex"
REPO = "SemiAnalysisAI/InferenceX"
TOKEN = "s3cret-token-value"

# run id -> (fixture directory, catalog metadata)
RUNS: dict[str, tuple[str, dict[str, Any]]] = {
    "29003473063": (
        "agentic_agg/kimik2.7_tp4_sweep_29003473063",
        {
            RunCol.REPO: REPO,
            RunCol.BRANCH: "kimi-k2.7-tp4",
            RunCol.HEAD_SHA: "6c128cd22b0c4d1066a9fc70a6ec54eb21bd9343",
            RunCol.TITLE: "Kimi-K2.7 TP4 agentic sweep",
            RunCol.CREATED_AT: "2026-05-01T10:00:00Z",
            RunCol.STATUS: "completed",
            RunCol.CONCLUSION: "success",
            RunCol.HTML_URL: f"https://github.com/{REPO}/actions/runs/29003473063",
            RunCol.SOURCE: "github",
        },
    ),
    "29337493492": (
        "agentic_agg/kimik2.7_tp8_sweep_29337493492",
        {RunCol.BRANCH: "kimi-k2.7-tp8", RunCol.CREATED_AT: "2026-05-09T08:00:00Z"},
    ),
    "dsr1": (
        "agentic_agg/dsr1_b200_multiturn_pareto_input",
        {
            RunCol.BRANCH: "main",
            RunCol.TITLE: "DeepSeek-R1 B200 offload on/off",
            RunCol.CREATED_AT: "2026-02-04T00:00:00Z",
        },
    ),
    "dsr1-rerun": (
        "agentic_agg/dsr1_b200_multiturn_pareto_input",
        {
            RunCol.BRANCH: "pr-123",
            RunCol.TITLE: "DeepSeek-R1 B200 rerun",
            RunCol.CREATED_AT: "2026-02-05T00:00:00Z",
        },
    ),
    "mtp": (
        "agg_fixed_seq",
        {
            RunCol.BRANCH: "mtp",
            RunCol.TITLE: "Kimi-K2.5 MTP",
            RunCol.CREATED_AT: "2026-04-03T00:00:00Z",
        },
    ),
}


# A file no reader knows, ingested with the MTP run so that run has a reject to show.
STRAY_NAME = "<img src=x onerror=alert(1)>.json"
STRAY_BODY = '{"comment": "scratch notes, not a benchmark result"}\n'


def build_store(root: Path) -> Store:
    """Ingest every fixture run into a store at `root` (plus one stray file for the MTP run),
    with the bundled master configs as `paretolens demo` gives them."""
    store = Store(root)
    seed_master_configs(store)
    stray = root.parent / "stray"
    stray.mkdir(parents=True, exist_ok=True)
    (stray / STRAY_NAME).write_text(STRAY_BODY)
    for run_id, (rel, meta) in RUNS.items():
        extra = [stray / STRAY_NAME] if run_id == "mtp" else []
        ingest_paths([FIXTURES / rel, *extra], store, run_id=run_id, run_meta=meta)
    return store


@pytest.fixture(scope="session")
def store() -> Iterator[Store]:
    root = Path(tempfile.mkdtemp(prefix="paretolens-dash-"))
    try:
        yield build_store(root / "store")
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def settings(store: Store) -> Settings:
    return Settings(
        store=store.root, host="127.0.0.1", token=None, github_token=None, launch_enabled=False
    )


@pytest.fixture(scope="session")
def app(store: Store, settings: Settings) -> Dash:
    return create_app(store, settings, golden_dir=GOLDEN_AL_DIR)


@pytest.fixture(scope="session")
def source(store: Store) -> DataSource:
    return DataSource(store, GOLDEN_AL_DIR)


@pytest.fixture(scope="session")
def ctx(source: DataSource, settings: Settings) -> AppContext:
    return AppContext(source=source, settings=settings, fetcher=Fetcher(source.store, settings))


@pytest.fixture()
def client(app: Dash) -> Any:
    return app.server.test_client()


@contextmanager
def serving(dash_app: Dash) -> Iterator[str]:
    """Serve an app with threaded waitress on a free loopback port; yields its base URL."""
    from waitress.server import create_server

    server = create_server(
        dash_app.server, host="127.0.0.1", port=0, threads=6, ident="paretolens-test"
    )
    thread = threading.Thread(target=server.run, name="waitress-test", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.effective_port}"
    finally:
        server.close()
        thread.join(timeout=5)


@pytest.fixture(scope="session")
def live_url(app: Dash) -> Iterator[str]:
    """The session app, served."""
    with serving(app) as url:
        yield url


CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


@pytest.fixture(scope="session")
def browser_downloads() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="paretolens-downloads-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def driver(browser_downloads: Path) -> Iterator[Any]:
    """One headless Debian chromium for the browser tests (apt-get install chromium chromium-driver)."""
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip(
            "needs /usr/bin/chromium and /usr/bin/chromedriver (apt-get install chromium chromium-driver)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="paretolens-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for arg in (
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={profile}", "--window-size=1440,900",
    ):  # fmt: skip
        opts.add_argument(arg)
    opts.add_experimental_option(
        "prefs",
        {
            "download.default_directory": str(browser_downloads),
            "download.prompt_for_download": False,
        },
    )
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=opts)
    drv.execute_cdp_cmd(
        "Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(browser_downloads)}
    )
    try:
        yield drv
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(autouse=True)
def _leave_the_page(request: pytest.FixtureRequest) -> Iterator[None]:
    """A browser test starts on a blank page with a drained console log and leaves its page
    before its servers stop, so a callback still in flight never reaches a closed port and no
    test reads another's console errors."""
    if "driver" not in request.fixturenames:
        yield
        return
    drv = request.getfixturevalue("driver")
    drv.get("about:blank")
    drv.get_log("browser")
    yield
    drv.get("about:blank")
