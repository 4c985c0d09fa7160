"""Issue 18 item 4: the 5,000-point run page in a real browser. The work after the first chart
runs in separate tasks (dashboard/assets/deferred.js); this checks that the user still gets the
whole page: both WebGL charts drawn with every point and the points grid with every row. How long
the tasks take is measured in benchmarks/, not asserted here."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from selenium.webdriver.common.by import By

from benchmarks.synth import runs_spec, synth_points, write_store
from dashboard.app import create_app
from dashboard.figures.style import Figure
from dashboard.pages.run_charts import main_figure, second_figure
from ingest.contract.col import Col
from ingest.store import Store
from paretolens.settings import Settings
from views import urls
from views.query.state import RunView
from views.source import DataSource

from .browser import console_errors, open_page, show_tables, wait
from .conftest import serving

pytestmark = pytest.mark.browser

RUN, POINTS = "synth-big", 5_000


@pytest.fixture(scope="module")
def big_store() -> Iterator[Store]:
    root = Path(tempfile.mkdtemp(prefix="paretolens-big-"))
    try:
        frame = synth_points(runs_spec(POINTS, points_per_run=POINTS, seed=22))
        write_store(frame.with_columns(pl.lit(RUN).alias(Col.RUN_ID)), root)
        yield Store(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def big_url(big_store: Store) -> Iterator[str]:
    settings = Settings(
        store=big_store.root, host="127.0.0.1", token=None, github_token=None, launch_enabled=False
    )
    with serving(create_app(big_store, settings)) as url:
        yield url


# Markers drawn by a chart (WebGL draws no nodes: the points plotly was given and drew), whether
# it drew WebGL, and the pixel ratio of its WebGL canvases.
CHART = (
    "var gd = document.querySelector('#' + arguments[0] + ' .js-plotly-plot');"
    "if (!gd || !gd._fullData || !gd._fullLayout) { return null; }"
    "var n = 0, gl = false;"
    "gd._fullData.forEach(function (t) {"
    "  if (t.visible === true && t.x && (t.mode || '').indexOf('markers') >= 0) { n += t.x.length; }"
    "  if (t.type === 'scattergl') { gl = true; } });"
    "var canvas = document.querySelector('#' + arguments[0] + ' canvas.gl-canvas-context');"
    "return {points: n, gl: gl, ratio: gd._context.plotGlPixelRatio,"
    " canvas: canvas ? canvas.width : 0, css: canvas ? canvas.clientWidth : 0};"
)
GRID = (  # getApi throws until the grid is built
    "var api = null; try { api = window.dash_ag_grid.getApi('points-grid'); } catch (e) {}"
    "if (!api) { return null; }"
    "var first = api.getDisplayedRowAtIndex(0);"
    "return {rows: api.getDisplayedRowCount(), first: first && first.data ? first.data.point_id : null,"
    " shown: document.querySelectorAll('#points-grid .ag-center-cols-container .ag-row').length};"
)


def _markers(fig: Figure) -> int:
    return sum(len(t["x"]) for t in fig["data"] if "markers" in t.get("mode", ""))


def _drawn(driver: Any, chart: str) -> dict[str, Any] | None:
    got: dict[str, Any] | None = driver.execute_script(CHART, chart)
    return got if got and got["points"] else None


def test_the_5000_point_page_draws_both_charts_and_every_grid_row(
    driver: Any, big_url: str, big_store: Store
) -> None:
    view = RunView(runs=(RUN,))
    data = DataSource(big_store).run_data(view)
    main_fig, second_fig = main_figure(data, view), second_figure(data, view)
    console_errors(driver)
    open_page(driver, big_url + urls.run(view))
    main = wait(driver, lambda d: _drawn(d, "main-chart"), timeout=90)
    # the second chart draws in steps (dashboard/assets/deferred.js: an empty trace, then a
    # transparent two-point one); it ends with every point its figure carries
    second = wait(
        driver,
        lambda d: (g := _drawn(d, "second-chart")) and g["points"] == _markers(second_fig) and g,
        timeout=90,
    )
    assert main["gl"] and second["gl"]
    assert main["points"] == _markers(main_fig)
    assert min(main["points"], second["points"]) > 4_000
    # the second chart's WebGL canvases are at the screen's pixel ratio, and were drawn
    ratio = driver.execute_script("return window.devicePixelRatio")
    assert second["ratio"] == max(1, round(ratio)) and second["canvas"] >= second["css"] > 0
    # ... and so are the main chart's (plotly's default would be 2: four times the pixels)
    assert main["ratio"] == max(1, round(ratio)) and main["canvas"] >= main["css"] > 0
    # rows given to the grid and rendered (AG Grid draws its rows a frame after it has them),
    # once the tables are scrolled into view
    show_tables(driver)
    grid = wait(
        driver,
        lambda d: (g := d.execute_script(GRID)) and g["rows"] and g["shown"] and g,
        timeout=90,
    )
    assert grid["rows"] == POINTS
    assert grid["first"] and 0 < grid["shown"] < 100  # rows are virtualised, not all in the DOM
    cells = driver.find_elements(By.CSS_SELECTOR, "#points-grid .ag-center-cols-container .ag-row")
    assert cells and cells[0].text.strip()
    assert console_errors(driver) == []
