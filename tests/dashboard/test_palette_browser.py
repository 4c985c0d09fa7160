"""Issue 27 in the browser: the palette URL option repaints the chart, and the downloaded SVG
carries the attribution line (the page's address, the runs, the tool)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from .browser import console_errors, open_page, wait_chart
from .test_scenarios import _fresh

pytestmark = pytest.mark.browser


def _marker_colours(driver: Any) -> set[str]:
    return set(
        driver.execute_script(
            "var gd = document.querySelector('#main-chart .js-plotly-plot');"
            "var out = [];"
            "gd.data.forEach(function (t) { var c = t.marker && t.marker.color;"
            "  (Array.isArray(c) ? c : [c]).forEach(function (x) { if (x) out.push(x); }); });"
            "return out;"
        )
    )


def test_high_contrast_palette_and_attributed_svg(
    driver: Any, live_url: str, browser_downloads: Path
) -> None:
    open_page(driver, f"{live_url}/inference?unofficialRun=dsr1&palette=contrast")
    wait_chart(driver)
    colours = _marker_colours(driver)
    assert "#004488" in colours and "#0072B2" not in colours  # the first arm, repainted
    driver.find_element(By.ID, "svg-main").click()
    text = _fresh(browser_downloads, ".svg").read_text(encoding="utf-8")
    assert "Made with paretolens from the published results of run dsr1" in text
    assert "palette=contrast" in text  # the page's address, to open the same view
    assert console_errors(driver) == []
