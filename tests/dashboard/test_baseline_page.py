"""Issue 14, item 1: a baseline under the run page's run (`baseline=<run id>|main`).

The store (tests/dashboard/baseline_store.py) holds the InferenceX app dump fixture and a
synthetic dump whose numbers make the uplift a hand computation:

- arm "synth1 h200" (two frontier points per side, so PCHIP is the straight line between them):
  baseline (newest main run) (x 20, y 60) and (10, 100); run (24, 70) and (12, 110). Common x
  range [12, 20]. Baseline at 12: 100 - 4 x 2 = 92; run at 20: 110 - (40 / 12) x 8 = 83.33.
  Areas: baseline (92 + 60) / 2 x 8 = 608, run (110 + 83.33) / 2 x 8 = 773.33, so the uplift is
  100 x (773.33 / 608 - 1) = +27.19 %; the deltas at the measured x (12 and 20) are +19.57 % and
  +38.89 %, mean +29.23 %.
- arm "glm4.7 gaudi3" (the dump fixture's official main run, 23000000001): the run has the same
  latencies and every throughput x 1.2, so the uplift is exactly +20 % (PCHIP is linear in y).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from dash import Dash

from dashboard.app import create_app
from dashboard.pages import run as run_page
from dashboard.pages import run_charts as charts
from ingest.contract.col import Col
from ingest.store import Store
from tests.dashboard.baseline_store import DUMP_MAIN, NEW_MAIN, OLD_MAIN, RUN, build
from views.query.state import RunView
from views.source import DataSource

AREA_BASE = (92 + 60) / 2 * 8
AREA_RUN = (110 + (110 - 40 / 12 * 8)) / 2 * 8
SYNTH_UPLIFT = 100 * (AREA_RUN / AREA_BASE - 1)  # +27.19 %
SYNTH_MEAN = 100 * ((110 / 92 - 1) + ((110 - 40 / 12 * 8) / 60 - 1)) / 2  # +29.23 %
GLM_UPLIFT = 20.0


@pytest.fixture(scope="module")
def bstore() -> Iterator[Store]:
    root = Path(tempfile.mkdtemp(prefix="paretolens-baseline-"))
    try:
        yield build(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def bapp(bstore: Store) -> Dash:
    return create_app(bstore)


@pytest.fixture(scope="module")
def bsource(bstore: Store) -> DataSource:
    return DataSource(bstore)


def _uplifts(source: DataSource, query: str) -> dict[str, tuple[float, float]]:
    view, notes = RunView.parse(query)
    assert notes == []
    data = source.run_data(view)
    assert data.baseline is not None
    table = data.baseline.table(data.names)
    return {
        str(r["arm_name"]).split(" · ")[0]: (r["uplift_pct"], r["mean_delta_pct"])
        for r in table.iter_rows(named=True)
    }


def test_the_hand_computation() -> None:
    assert round(SYNTH_UPLIFT, 2) == 27.19
    assert round(SYNTH_MEAN, 2) == 29.23


def test_baseline_is_url_state() -> None:
    view, notes = RunView.parse(f"unofficialRun={RUN}&baseline=main")
    assert (view.baseline, notes) == ("main", [])
    assert "baseline=main" in view.query()
    view, notes = RunView.parse(f"unofficialRun={RUN}&baseline=<b>")
    assert view.baseline == ""
    assert notes and notes[0].startswith("ignored baseline=<b>")


def test_main_baseline_uplift_matches_the_hand_computation(bsource: DataSource) -> None:
    got = _uplifts(bsource, f"unofficialRun={RUN}&baseline=main")
    assert got["synth1 h200 vllm fp8"] == pytest.approx((SYNTH_UPLIFT, SYNTH_MEAN))
    assert got["glm4.7 gaudi3 vllm-gaudi bf16"] == pytest.approx((GLM_UPLIFT, GLM_UPLIFT))


def test_main_baseline_takes_the_newest_main_run(bsource: DataSource) -> None:
    data = bsource.run_data(RunView.parse(f"unofficialRun={RUN}&baseline=main")[0])
    assert data.baseline is not None
    ys = sorted(data.baseline.points.get_column(Col.TPUT_PER_GPU).to_list())
    assert 999 not in ys  # the older main run (24000000000) is not the baseline
    md = data.baseline.markdown
    assert NEW_MAIN in md and DUMP_MAIN in md and OLD_MAIN not in md
    assert "+27.2%" in md and "+20.0%" in md


def test_a_dump_ingested_official_run_as_baseline(bsource: DataSource) -> None:
    got = _uplifts(bsource, f"unofficialRun={RUN}&baseline={DUMP_MAIN}")
    assert got == {"glm4.7 gaudi3 vllm-gaudi bf16": pytest.approx((GLM_UPLIFT, GLM_UPLIFT))}


def test_chart_draws_baseline_solid_run_dashed_with_crosses_and_shades_the_uplift(
    bsource: DataSource,
) -> None:
    view = RunView.parse(f"unofficialRun={RUN}&baseline=main")[0]
    fig = charts.main_figure(bsource.run_data(view), view)
    traces = fig["data"]
    ours = [t for t in traces if t.get("meta", "").endswith(RUN) and "envelope" not in t["meta"]]
    run_lines = [t for t in ours if t.get("mode") == "lines"]
    assert run_lines and all(t["line"]["dash"] == "dash" for t in run_lines)
    run_points = [t for t in ours if t["mode"].startswith("markers")]
    assert run_points and all(
        set(t["marker"]["symbol"]) <= {"x", "x-open", "x-open-dot", "x-thin-open"}
        if isinstance(t["marker"]["symbol"], list)
        else t["marker"]["symbol"] == "x"
        for t in run_points
    )
    base_lines = [t for t in traces if "· baseline main" in t.get("name", "")]
    assert len(base_lines) == 2 and all(t["line"]["dash"] == "solid" for t in base_lines)
    shaded = [t for t in traces if t.get("fill") == "toself"]
    assert len(shaded) == 2
    notes = {
        a["text"] for a in fig["layout"]["annotations"] if a.get("name", "").startswith("uplift")
    }
    assert notes == {f"+{SYNTH_UPLIFT:.1f}%", f"+{GLM_UPLIFT:.1f}%"}


def test_exports_of_the_uplift_and_the_markdown(bapp: Dash) -> None:
    client = bapp.server.test_client()
    q = f"unofficialRun={RUN}&baseline=main"
    csv = client.get(f"/export/baseline.csv?{q}")
    assert csv.status_code == 200
    frame = pl.read_csv(csv.data)
    assert "uplift_pct (%)" in frame.columns and "x_lo (tok/s/user)" in frame.columns
    assert sorted(frame.get_column("uplift_pct (%)").round(4).to_list()) == [
        round(GLM_UPLIFT, 4),
        round(SYNTH_UPLIFT, 4),
    ]
    md = client.get(f"/export/baseline.md?{q}")
    assert md.status_code == 200 and md.content_type.startswith("text/markdown")
    assert "#### Baseline: the latest main-branch result" in md.data.decode()
    assert client.get(f"/export/baseline.md?unofficialRun={RUN}").status_code == 400


def test_run_page_shows_the_uplift_table(bapp: Dash, bsource: DataSource) -> None:
    from dashboard.context import AppContext
    from dashboard.fetch import Fetcher
    from dashboard.settings import LocalSettings

    ctx = AppContext(
        source=bsource,
        settings=LocalSettings(store=bsource.store.root),
        fetcher=Fetcher(bsource.store, LocalSettings(store=bsource.store.root)),
    )
    text = str(run_page.layout(ctx, f"unofficialRun={RUN}&baseline=main"))
    assert "baseline-table" in text and f"+{SYNTH_UPLIFT:.1f}%" in text
    text = str(run_page.layout(ctx, f"unofficialRun={RUN}&baseline=12345"))
    assert (
        "ignored baseline=12345: run 12345 is not in the store; pick another run, or main" in text
    )


# ---- in the browser ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def blive(bapp: Dash) -> Iterator[str]:
    from tests.dashboard.conftest import serving

    with serving(bapp) as url:
        yield url


def _shaded_numbers(driver: Any) -> set[str]:
    from selenium.webdriver.common.by import By

    return {
        e.text
        for e in driver.find_elements(By.CSS_SELECTOR, "#main-chart .annotation-text")
        if e.text.endswith("%")
    }


def _table_numbers(driver: Any) -> dict[str, str]:
    from selenium.webdriver.common.by import By

    out = {}
    for row in driver.find_elements(By.CSS_SELECTOR, "#baseline-table tr"):
        cells = row.find_elements(By.TAG_NAME, "td")
        if not cells:
            continue  # the header row
        out[cells[0].text.split(" · ")[0]] = cells[2].text
    return out


@pytest.mark.browser
def test_browser_run_over_its_main_baseline_and_a_dump_run(driver: Any, blive: str) -> None:
    from tests.dashboard.browser import console_errors, open_page, wait, wait_chart

    synth, glm = f"+{SYNTH_UPLIFT:.1f}%", f"+{GLM_UPLIFT:.1f}%"
    assert (synth, glm) == ("+27.2%", "+20.0%")  # the hand computation, as the page rounds it
    open_page(driver, f"{blive}/inference?unofficialRun={RUN}&baseline=main")
    wait_chart(driver)
    assert wait(driver, lambda d: _shaded_numbers(d) == {synth, glm} or None)
    assert wait(driver, lambda d: _table_numbers(d) or None) == {
        "synth1 h200 vllm fp8": synth,
        "glm4.7 gaudi3 vllm-gaudi bf16": glm,
    }
    assert console_errors(driver) == []
    open_page(driver, f"{blive}/inference?unofficialRun={RUN}&baseline={DUMP_MAIN}")
    wait_chart(driver)
    assert wait(driver, lambda d: _shaded_numbers(d) == {glm} or None)
    assert wait(driver, lambda d: _table_numbers(d) or None) == {
        "glm4.7 gaudi3 vllm-gaudi bf16": glm
    }
    assert console_errors(driver) == []
