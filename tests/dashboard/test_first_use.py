"""The run page loads its live page on first use (issue 28): the static charts of the page HTML
answer hover by themselves, and plotly, Dash and React run only on the user's first intent
(dashboard/assets/boot.js); the click that woke the page takes effect on the live page.

Every value checked is read from the sample run's result file: the TP4 EP4 vLLM point at 128
users with KV offload to DRAM (`median_itl` 0.07803 s, `tput_per_gpu` 1376.80, `median_ttlt`
616.70 s).
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.dashboard.browser import STARTED, open_page, wait, wait_chart
from tests.dashboard.test_static_hover import LAYOUT_SHIFT, POINT_FILE, RUN_DIR

pytestmark = pytest.mark.browser

PAGE = "/inference?unofficialRun=dsr1"
ARM, RUN = "TP4 EP4 | no spec | kv dram", "run dsr1 · conc 128"
# the live page's scripts have not run: no plotly, no Dash client, no Dash renderer started
NOTHING_RAN = (
    "return typeof window.Plotly === 'undefined' && typeof window.dash_clientside === 'undefined'"
    " && typeof window.DashRenderer === 'undefined' && !document.querySelector('#page > *')"
)
TIP = (
    "var t = arguments[0].querySelector('.sc-tip');"
    "return t && t.style.display !== 'none' ? t.textContent : null;"
)
Y_TYPE = (
    "var gd = document.querySelector('#' + arguments[0] + ' .js-plotly-plot');"
    "return gd && gd._fullLayout ? gd._fullLayout.yaxis.type : null;"
)


def _point(driver: Any, chart: Any) -> Any:
    from selenium.webdriver.common.by import By

    return next(
        p
        for p in chart.find_elements(By.CSS_SELECTOR, ".point[data-h]")
        if p.get_attribute("data-h").startswith(f"{ARM}\n{RUN}\n")
    )


def _row() -> dict[str, Any]:
    return dict(json.loads((RUN_DIR / POINT_FILE).read_text()))


def test_static_charts_answer_hover_and_nothing_else_runs(driver: Any, live_url: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    row = _row()
    intvty, tput, e2el = 1 / row["median_itl"], row["tput_per_gpu"], row["median_ttlt"]
    driver.set_window_size(1440, 1800)  # both charts on screen: no scroll (a scroll wakes the page)
    try:
        driver.get(live_url + PAGE)
        charts = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#static-page .static-chart"))  # fmt: skip
        assert len(charts) == 2  # the main chart and the one below it, both drawn in the HTML
        time.sleep(1.0)  # a quiet second: the page runs nothing by itself
        assert driver.execute_script(NOTHING_RAN)
        expected = [
            f"median_intvty: {intvty:.4g} tok/s/user",  # 12.82
            f"median_e2el: {e2el:.4g} s",  # 616.7
        ]
        for chart, x_line in zip(charts, expected, strict=True):
            # the pointer jumps onto the point (a path over the filter panel would wake the page)
            ActionChains(driver, duration=0).move_to_element(_point(driver, chart)).perform()
            text = wait(driver, lambda d, c=chart: d.execute_script(TIP, c))
            assert text.split("\n")[:4] == [ARM, RUN, x_line, f"tput_per_gpu: {tput:.5g} tok/s/GPU"]
            time.sleep(0.3)
            assert driver.execute_script(NOTHING_RAN)  # hovering loads nothing
    finally:
        driver.set_window_size(1440, 900)


@pytest.mark.parametrize("height", [1800, 900])
def test_a_click_on_log_y_wakes_the_page_and_takes_effect(
    driver: Any, live_url: str, height: int
) -> None:
    """In a tall window the pointer lands on the checkbox and clicks at once: the click reaches
    the static page (nothing live yet) and is replayed on the live checkbox. In a 900 px one the
    checkbox is scrolled into view first (a scroll: the page wakes) and the click may reach the
    live checkbox itself. Either way the chart turns log once, not twice."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    driver.set_window_size(1440, height)
    try:
        driver.get(live_url + PAGE)
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#static-page .static-chart"))
        assert driver.execute_script(NOTHING_RAN)
        label = next(
            e
            for e in driver.find_elements(By.CSS_SELECTOR, "#static-page .sk-checks label")
            if e.text == "log y"
        )
        # a real press and release where the checkbox stands (the stand-in itself is inert)
        ActionChains(driver, duration=0).move_to_element(label).click().perform()
        if height > 900:  # kept for the live page: the click reached nothing live
            wake = driver.execute_script("return window.paretolensWake")
            assert wake is not None and wake["click"] is True, wake
        wait(driver, lambda d: d.execute_script(STARTED))
        wait_chart(driver)  # the live chart drawn, the static page gone
        wait(driver, lambda d: "logy=1" in d.current_url)
        for chart in ("main-chart", "second-chart"):
            wait(driver, lambda d, c=chart: d.execute_script(Y_TYPE, c) == "log")
        time.sleep(0.5)  # (a second toggle would come within a frame or two)
        box = driver.find_element(By.CSS_SELECTOR, "input[type=checkbox][value=logy]")
        assert box.is_selected() and "logy=1" in driver.current_url
    finally:
        driver.set_window_size(1440, 900)


def test_the_live_page_takes_over_without_moving_anything(driver: Any, live_url: str) -> None:
    from selenium.webdriver.common.by import By

    driver.get(live_url + PAGE)
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#static-page .static-chart"))
    before = driver.execute_script(BOXES)
    open_page(driver, live_url + PAGE)  # woken by a pointer on the filter panel
    wait_chart(driver)
    wait_chart(driver, "second-chart")
    shift = driver.execute_async_script(LAYOUT_SHIFT)
    assert shift < 0.1, shift
    after = driver.execute_script(LIVE_BOXES)
    for b, a in zip(before, after, strict=True):
        assert all(abs(u - v) <= 3 for u, v in zip(b, a, strict=True)), (before, after)


BOXES = (
    "return Array.from(document.querySelectorAll('#static-page .sc-plot')).map(function (e) {"
    " var r = e.getBoundingClientRect(); return [r.left + scrollX, r.top + scrollY, r.width, r.height]; });"
)
LIVE_BOXES = (
    "return ['main-chart', 'second-chart'].map(function (id) {"
    " var r = document.querySelector('#' + id + ' .nsewdrag').getBoundingClientRect();"
    " return [r.left + scrollX, r.top + scrollY, r.width, r.height]; });"
)


def test_a_link_to_a_table_loads_at_once(driver: Any, live_url: str) -> None:
    from selenium.webdriver.common.by import By

    driver.get(live_url + PAGE + "&tab=pruned")
    # no input at all: the page starts its scripts after its first frame, as a table link needs
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#page > *"))
    wait_chart(driver)
    assert driver.execute_script("return typeof window.Plotly") == "object"
