"""Issue 28 item 3: the run page builds its tables when they are needed. Below the fold, the grid
library does not run and no grid is built while the charts load; scrolled into view, the open
tab's grid is built with every row, in the space the page kept for it. A link that names a tab
(`tab=`) builds that tab at once."""

from __future__ import annotations

import time
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from .browser import console_errors, open_page, show_tables, wait, wait_chart

pytestmark = pytest.mark.browser

# What the page holds of the grids: whether the grid library ran, the grids built, the points
# grid's rows (AG Grid's own count: it renders only the rows on screen), the points box's height.
GRIDS = """
var api = null;
try { api = window.dash_ag_grid && window.dash_ag_grid.getApi('points-grid'); } catch (e) {}
var box = document.getElementById('points-box');
return {library: !!window.dash_ag_grid, grids: document.querySelectorAll('.ag-root').length,
        rows: api ? api.getDisplayedRowCount() : null,
        box: box ? box.getBoundingClientRect().height : null,
        boxText: box ? box.textContent : null,
        boxTop: box ? box.getBoundingClientRect().top : null};
"""
# Layout shifts without recent input since the page started (the browser's own entries).
SHIFTS = """
var done = arguments[arguments.length - 1], cls = 0;
new PerformanceObserver(function (list) {
  list.getEntries().forEach(function (e) { if (!e.hadRecentInput) { cls += e.value; } });
}).observe({type: 'layout-shift', buffered: true});
setTimeout(function () { done(cls); }, 300);
"""
# The sample run (tests/fixtures/inferencex/agentic_agg/dsr1_b200_multiturn_pareto_input): 44
# points, every one a row of the points tab.
DSR1_POINTS = 44


def _second_chart_drawn(driver: Any) -> bool:
    return bool(
        driver.execute_script(
            "var gd = document.querySelector('#second-chart .js-plotly-plot');"
            "return !!(gd && gd._fullData && gd._fullData.length);"
        )
    )


def test_tables_are_built_when_scrolled_into_view_not_before(driver: Any, live_url: str) -> None:
    driver.set_window_size(1440, 900)
    console_errors(driver)
    open_page(driver, f"{live_url}/inference?unofficialRun=dsr1")
    wait_chart(driver)
    # both charts drawn: the page has asked for everything it asks for at load
    wait(driver, _second_chart_drawn)
    wait(driver, lambda d: d.execute_script("return !!document.getElementById('tables')"))
    time.sleep(1.0)  # room for a table request, were one made at load
    before = driver.execute_script(GRIDS)
    assert before["boxTop"] > driver.execute_script("return window.innerHeight")  # below the fold
    assert (before["library"], before["grids"], before["rows"]) == (False, 0, None)
    assert "loading the table" in before["boxText"]
    show_tables(driver)
    after = wait(driver, lambda d: (g := d.execute_script(GRIDS))["rows"] and g)
    assert after["library"] and after["grids"] == 1 and after["rows"] == DSR1_POINTS
    # the grid took the space kept for it: nothing below it moved
    assert abs(after["box"] - before["box"]) <= 1, (before, after)
    driver.set_script_timeout(10)
    assert driver.execute_async_script(SHIFTS) < 0.1
    assert console_errors(driver) == []


def test_a_link_to_a_tab_builds_it_at_load(driver: Any, live_url: str) -> None:
    driver.set_window_size(1440, 900)
    open_page(driver, f"{live_url}/inference?unofficialRun=dsr1&tab=al")
    wait_chart(driver)
    # the sample run has no speculative-decoding point: the AL tab's built body says so
    wait(
        driver,
        lambda d: "no speculative-decoding points" in d.find_element(By.ID, "al-box").text,
    )
    assert driver.execute_script(
        "return document.getElementById('al-box').getBoundingClientRect().top > window.innerHeight"
    )


# The outputs of every callback request the page makes (installed before any page script).
RECORD_REQUESTS = """
window.__plRequests = [];
var fetch0 = window.fetch;
window.fetch = function (url, opts) {
  if (/_dash-update-component/.test(String(url)) && opts && typeof opts.body === "string") {
    try { window.__plRequests.push(JSON.parse(opts.body).output); } catch (e) {}
  }
  return fetch0.apply(this, arguments);
};
"""
# The points a drawn chart's labelled traces carry (each arm's points, beside its one-point trace).
LABELLED = """
var gd = document.querySelector('#' + arguments[0] + ' .js-plotly-plot');
var n = 0;
(gd && gd.data || []).forEach(function (t) { if (t.mode === 'markers+text') { n += t.x.length; } });
return n;
"""


def test_the_second_chart_is_drawn_from_the_first_layout(driver: Any, live_url: str) -> None:
    """Issue 28: the second chart (SVG at 44 points) comes with the page's first layout: drawn with
    every point and no callback request asked for it; a control change still redraws it."""
    script = driver.execute_cdp_cmd(
        "Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_REQUESTS}
    )["identifier"]
    try:
        console_errors(driver)
        open_page(driver, f"{live_url}/inference?unofficialRun=dsr1")
        wait_chart(driver)
        wait(driver, lambda d: d.execute_script(LABELLED, "second-chart") == DSR1_POINTS)
        assert driver.execute_script(LABELLED, "main-chart") == DSR1_POINTS
        time.sleep(1.0)  # room for a request, were one made once the main chart is drawn
        asked = driver.execute_script("return window.__plRequests")
        assert not [o for o in asked if "second-figure" in o], asked
        driver.find_element(By.CSS_SELECTOR, "input[type=checkbox][value=logy]").click()
        wait(
            driver,
            lambda d: (
                d.execute_script(
                    "var gd = document.querySelector('#second-chart .js-plotly-plot');"
                    "return gd._fullLayout.yaxis.type;"
                )
                == "log"
            ),
        )
        asked = driver.execute_script("return window.__plRequests")
        assert [o for o in asked if "second-figure" in o], asked
        assert console_errors(driver) == []
    finally:
        driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script})
