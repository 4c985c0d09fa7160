"""Take the screenshots of docs/dashboard.md's issue-27 section (docs/img/*.png).

    uv run python scripts/docs_screenshots.py [NAME.png ...]   # all, or only those named

Builds a store from the test fixtures (the browser tests' runs, the InferenceX app dump, and a
run whose bench_serving result sits inside the real gpu_metrics excerpt's window, assembled in a
temporary folder as tests/ingest/readers/test_gpu_metrics.py does), serves the app on loopback
and photographs each page with the headless chromium the browser tests use.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

from dashboard.app import create_app  # noqa: E402
from ingest.bundled import GOLDEN_AL_DIR  # noqa: E402
from ingest.pipeline import ingest_paths  # noqa: E402
from ingest.sources.dump import ingest_dump  # noqa: E402
from ingest.store import Store  # noqa: E402
from paretolens.settings import Settings  # noqa: E402
from tests.dashboard.baseline_store import DUMP  # noqa: E402
from tests.dashboard.browser import open_page, wait, wait_chart  # noqa: E402
from tests.dashboard.conftest import CHROMEDRIVER, CHROMIUM, build_store, serving  # noqa: E402

OUT = ROOT / "docs" / "img"
GPU = ROOT / "tests" / "fixtures" / "wild" / "gpu_metrics"
T0 = 1786553852.0


def _gpu_run(tmp: Path, store: Store) -> str:
    run = tmp / "gpu-run"
    run.mkdir()
    doc = json.loads((GPU / "sglang_mtp_tp4_conc64_isl8192_osl1024.json").read_text())
    doc["benchmark_start_time_unix"], doc["benchmark_end_time_unix"] = T0 + 0.5, T0 + 1.5
    (run / "result.json").write_text(json.dumps(doc))
    shutil.copy(GPU / "amd_smi_mi355x_excerpt.csv", run / "gpu_metrics.csv")
    # the telemetry's 8 MI355X GPUs (the result's own file name says TP4: another run of the
    # same commit, which is why this pair is assembled for the picture only)
    ingest_paths([run], store, run_id="gpu-telemetry", defaults={"hw": "mi355x", "tp": 8})
    return str(store.points(["gpu-telemetry"]).item(0, "point_id"))


def _driver() -> Any:
    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1440,1000"):
        opts.add_argument(arg)
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=opts)


ONLY = set(sys.argv[1:])


def _shot(
    driver: Any,
    url: str,
    name: str,
    element: str | None = None,
    chart: bool = True,
    block: str = "start",
) -> None:
    if ONLY and name not in ONLY:
        return
    open_page(driver, url)
    if chart:
        wait_chart(driver)
    time.sleep(1.5)  # the deferred tables and the second chart
    target = driver.find_element(By.ID, element) if element else None
    if target is not None:
        # "center" keeps a short element clear of the sticky navigation bar
        driver.execute_script("arguments[0].scrollIntoView({block: arguments[1]});", target, block)
        time.sleep(0.5)
        target.screenshot(str(OUT / name))
    else:
        driver.save_screenshot(str(OUT / name))
    print("wrote", OUT / name)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="paretolens-docs-"))
    try:
        store = build_store(tmp / "store")
        ingest_dump(DUMP, store)
        point = _gpu_run(tmp, store)
        settings = Settings(store=store.root, host="127.0.0.1", token=None, github_token=None)
        app = create_app(store, settings, golden_dir=GOLDEN_AL_DIR)
        driver = _driver()
        try:
            with serving(app) as url:
                run = f"{url}/inference?unofficialRun="
                _shot(
                    driver,
                    f"{run}mtp&tab=tco&tco_intvty=3&tco_tput=10000",
                    "tco-calculator.png",
                    "tco-box",
                )
                _shot(driver, f"{run}dsr1&palette=contrast", "palette-contrast.png", "main-chart")
                _shot(
                    driver,
                    f"{run}mtp&y=cost_per_mtok_hyperscaler",
                    "assumption-badges.png",
                    "at-table",
                )
                _shot(driver, f"{run}23000000002", "evals-chart.png", "evals-chart")
                _shot(
                    driver,
                    f"{run}gpu-telemetry&point={point}",
                    "gpu-telemetry.png",
                    "detail",
                    chart=False,
                )
                # the newcomer's first page (the link `paretolens serve` prints): the ranking
                # at x = 40 and the A/B deltas of the KV offload pair at equal load
                headline = f"{run}dsr1&at=40&ab=kv_offloading&tab=deltas"
                _shot(driver, headline, "ranking-at-x.png", "at-table", block="center")
                _shot(driver, headline, "ab-deltas.png", "deltas-box")
                # the exact test-config line under the bundled master config
                _shot(
                    driver,
                    f"{run}29003473063&tab=pruned&master=amd-master.yaml",
                    "pruned-test-config.png",
                    "pruned-box",
                )
                _shot(
                    driver,
                    f"{url}/compare?base=29003473063&candidate=29337493492&palette=tol",
                    "compare-palette.png",
                    "compare-chart",
                    chart=False,
                )
                _shot(
                    driver,
                    f"{url}/history?arm=b3ff4eac157f4468&at=40",
                    "history-changelog.png",
                    None,
                    chart=False,
                )
                wait(driver, lambda d: d.find_elements(By.ID, "history-changelog"))
        finally:
            driver.quit()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
